// Criterion "inventory" (lesson section 1.3): list_devices describes every visible device as the
// runtime numbers it, with CUDA's bus id and nvidia-smi's UUID.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "devices.h"
#include "support/expectations.h"
#include "machine_truth.h"
#include "scenario.h"
#include "support/student_calls.h"

namespace {

using suite::StudentCalls;

std::string shown(const DeviceInfo& d) {
    return "{" + std::to_string(d.ordinal) + ", \"" + d.name + "\", cc " + std::to_string(d.major) + "." +
           std::to_string(d.minor) + ", " + std::to_string(d.multiprocessors) + " SMs, " +
           suite::counted(d.total_memory, "byte") + ", \"" + d.pci_bus_id + "\", \"" + d.uuid + "\"}";
}

void expect_inventory() {
    StudentCalls calls;
    const std::vector<DeviceInfo> listed = calls.watch("list_devices()", [] { return list_devices(); });
    const std::vector<DeviceInfo> truth = lesson1::expected_devices();
    if (!suite::expect(listed.size() == truth.size(), "list_devices() gives one record per visible device",
                         suite::counted(truth.size(), "record"),
                         suite::counted(listed.size(), "record") +
                             (listed.empty() && calls.calls().empty() ? " without any CUDA call: is this still the skeleton's TODO(2)?" : "")))
        return;
    for (std::size_t i = 0; i < truth.size(); ++i) {
        const std::string fields = lesson1::differing_fields(truth[i], listed[i]);
        if (!suite::expect(fields.empty(), "record " + std::to_string(i) + " of list_devices() describes " +
                                                  lesson1::device_name(static_cast<int>(i)) + " (wrong: " + fields + ")",
                             shown(truth[i]), shown(listed[i])))
            return;   // one wrong record says enough; the next would repeat it
    }
    suite::expect_no_error_left(calls, "list_devices()");
}

}  // namespace

TEST_CASE("inventory: list_devices on one GPU") {
    if (!lesson1::start({"h200"})) return;
    expect_inventory();
}

TEST_CASE("inventory: list_devices on mixed-3 tells three different boards apart") {
    if (!lesson1::start({"mixed-3"})) return;
    expect_inventory();
}

TEST_CASE("inventory: list_devices on mixed-3 with CUDA_VISIBLE_DEVICES=\"2,0\" numbers the devices from 0") {
    if (!lesson1::start({"mixed-3", std::string("2,0")})) return;
    expect_inventory();
}

TEST_CASE("inventory: list_devices on hgx-h200-8 with a random subset in a random order") {
    auto random = lesson1::random_for("inventory");
    const std::string list = lesson1::random_visible_list(random, 8, 2 + static_cast<int>(random() % 6));
    if (!lesson1::start({"hgx-h200-8", list})) return;
    expect_inventory();
}

TEST_CASE("inventory: list_devices with a full UUID and a UUID prefix in CUDA_VISIBLE_DEVICES") {
    // The UUIDs of the whole machine, read before narrowing it.
    if (!lesson1::start({"hgx-h200-8"})) return;
    const std::vector<DeviceInfo> all = lesson1::expected_devices();
    auto random = lesson1::random_for("inventory-uuid");
    const std::string order = lesson1::random_visible_list(random, 8, 2);
    const int first = order[0] - '0', second = order[2] - '0';
    const std::string list = all[static_cast<std::size_t>(first)].uuid + "," + all[static_cast<std::size_t>(second)].uuid.substr(0, 12);
    if (!lesson1::start({"hgx-h200-8", list})) return;
    expect_inventory();
}

TEST_CASE("inventory: list_devices with CUDA_DEVICE_ORDER=PCI_BUS_ID on mixed-3") {
    if (!lesson1::start({"mixed-3", std::string("1,2"), std::string("PCI_BUS_ID")})) return;
    expect_inventory();
}
