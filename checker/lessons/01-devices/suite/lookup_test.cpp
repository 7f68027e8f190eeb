// Criterion "lookup" (lesson section 1.5): find_device by PCI bus id in either spelling, or by UUID,
// answers the ordinal this process uses, and -1 for what no visible device is.
#include <doctest/doctest.h>

#include <cctype>
#include <string>
#include <vector>

#include "devices.h"
#include "support/expectations.h"
#include "machine_truth.h"
#include "scenario.h"
#include "support/student_calls.h"

namespace {

using suite::StudentCalls;

std::string uppercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

// Asks for `id` and expects `ordinal`; returns whether it matched.
bool expect_found(StudentCalls& calls, const std::string& id, int ordinal, const std::string& what) {
    const std::string call = "find_device(\"" + id + "\")";
    const int found = calls.watch(call, [&] { return find_device(id); });
    const bool ok = suite::expect(found == ordinal, call + " (" + what + ")",
                                    ordinal < 0 ? "-1 (no visible device)" : std::to_string(ordinal),
                                    std::to_string(found));
    return suite::expect_no_error_left(calls, call) && ok;
}

// Every visible device by CUDA's bus id, nvidia-smi's and its UUID; stops at the first wrong answer.
void expect_every_spelling() {
    StudentCalls calls;
    for (const DeviceInfo& d : lesson1::expected_devices()) {
        const std::string name = lesson1::device_name(d.ordinal);
        if (!expect_found(calls, d.pci_bus_id, d.ordinal, name + ", CUDA's spelling")) return;
        if (!expect_found(calls, lesson1::nvidia_smi_spelling(d.pci_bus_id), d.ordinal,
                          name + ", nvidia-smi's spelling: 8-digit domain, lower case"))
            return;
        if (!expect_found(calls, d.uuid, d.ordinal, name + ", its UUID")) return;
        if (!expect_found(calls, uppercase(d.uuid.substr(4)).insert(0, "GPU-"), d.ordinal, name + ", its UUID in upper case")) return;
    }
}

}  // namespace

TEST_CASE("lookup: find_device on mixed-3 by bus id in both spellings and by UUID") {
    if (!lesson1::start({"mixed-3"})) return;
    expect_every_spelling();
}

TEST_CASE("lookup: find_device on hgx-h200-8 with a random CUDA_VISIBLE_DEVICES answers this process's ordinals") {
    auto random = lesson1::random_for("lookup");
    const std::string list = lesson1::random_visible_list(random, 8, 2 + static_cast<int>(random() % 5));
    if (!lesson1::start({"hgx-h200-8", list})) return;
    expect_every_spelling();
}

TEST_CASE("lookup: find_device gives -1 for a hidden device, an empty slot and malformed text") {
    // The UUID and bus id of a device that CUDA_VISIBLE_DEVICES then hides.
    if (!lesson1::start({"hgx-h200-8"})) return;
    const DeviceInfo hidden = lesson1::expected_devices()[3];
    if (!lesson1::start({"hgx-h200-8", std::string("6,1")})) return;
    StudentCalls calls;
    if (!expect_found(calls, lesson1::expected_devices()[1].pci_bus_id, 1, "a visible device, to show lookups work")) return;
    expect_found(calls, hidden.uuid, -1, "the UUID of a device CUDA_VISIBLE_DEVICES hides");
    expect_found(calls, hidden.pci_bus_id, -1, "the bus id of a device CUDA_VISIBLE_DEVICES hides");
    expect_found(calls, "0000:FF:1F.0", -1, "an address where no GPU sits");
    expect_found(calls, "not a bus id", -1, "malformed text");
    expect_found(calls, "GPU-", -1, "a UUID with no digits");
}

// Bus ids that differ only in the PCI domain: a lookup that drops the domain answers the wrong board.
TEST_CASE("lookup: find_device tells apart two boards at bus 1B:00 of PCI domains 0000 and 0001") {
    if (!lesson1::start({lesson1::two_domain_machine()})) return;
    expect_every_spelling();
    StudentCalls calls;
    expect_found(calls, "0002:1B:00.0", -1, "bus 1B:00 of domain 0002, where no GPU sits: the domain is part of the address");
}
