// Criterion "selection" (lesson section 1.8): pick_device chooses by the header's stated rule (compute
// capability compared as a version, memory, then SMs, then the lowest PCI address) and refuses when no
// device qualifies, whatever cudaChooseDevice would say.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <iterator>
#include <random>
#include <vector>

#include "devices.h"
#include "support/expectations.h"
#include "machine_truth.h"
#include "scenario.h"
#include "support/student_calls.h"

namespace {

using suite::StudentCalls;

constexpr std::size_t kGiB = std::size_t{1} << 30;

bool expect_pick(StudentCalls& calls, const Requirements& needs, const std::string& why = "") {
    const std::string call = "pick_device(" + lesson1::describe(needs) + ")";
    const int picked = calls.watch(call, [&] { return pick_device(needs); });
    const int truth = lesson1::expected_pick(needs);
    std::string expected = truth < 0 ? "-1 (no device qualifies)" : lesson1::device_name(truth);
    if (!why.empty()) expected += ": " + why;
    const bool ok = suite::expect(picked == truth, call, expected,
                                    picked < 0 ? "-1" : lesson1::device_name(picked));
    return suite::expect_no_error_left(calls, call) && ok;
}

// Requirements drawn from what real programs ask for, so that most draws split the machine.
Requirements random_requirements(std::mt19937_64& random) {
    static const int capabilities[][2] = {{0, 0}, {7, 5}, {8, 0}, {8, 6}, {8, 9}, {9, 0}, {10, 0}};
    static const std::size_t memories[] = {0, 16 * kGiB, 40 * kGiB, 79 * kGiB, 100 * kGiB, 200 * kGiB};
    const auto& cc = capabilities[random() % std::size(capabilities)];
    return Requirements{cc[0], cc[1], memories[random() % std::size(memories)]};
}

// Several random requests, at least one that some device meets and one that none does.
void expect_random_picks(const std::string& salt) {
    auto random = lesson1::random_for(salt);
    std::vector<Requirements> requests;
    bool positive = false, refusal = false;
    for (int draw = 0; draw < 8; ++draw) {
        requests.push_back(random_requirements(random));
        (lesson1::expected_pick(requests.back()) >= 0 ? positive : refusal) = true;
    }
    if (!positive) requests.push_back(Requirements{});
    if (!refusal) requests.push_back(Requirements{10, 0, 0});
    StudentCalls calls;
    for (const Requirements& needs : requests) {
        if (!expect_pick(calls, needs)) return;   // one wrong pick says enough
    }
}

}  // namespace

TEST_CASE("selection: pick_device on mixed-3 for random requirements") {
    if (!lesson1::start({"mixed-3"})) return;
    expect_random_picks("selection-mixed");
}

TEST_CASE("selection: pick_device on mixed-3 with CUDA_VISIBLE_DEVICES=\"2,0\"") {
    if (!lesson1::start({"mixed-3", std::string("2,0")})) return;
    expect_random_picks("selection-reordered");
}

TEST_CASE("selection: compute capability compares as a version (8.9 accepts 9.0, 9.0 refuses 8.9)") {
    if (!lesson1::start({"mixed-3"})) return;
    StudentCalls calls;
    if (!expect_pick(calls, Requirements{8, 9, 0}, "the H200 (9.0) qualifies for 8.9: compare the major number first")) return;
    expect_pick(calls, Requirements{8, 9, 100 * kGiB}, "only the H200 has 100 GiB, and 9.0 is newer than 8.9");
    expect_pick(calls, Requirements{9, 0, 0}, "only the H200 is 9.0 or newer");
    expect_pick(calls, Requirements{10, 0, 0}, "no device is 10.0: refuse, whatever cudaChooseDevice answers");
}

TEST_CASE("selection: identical GPUs are told apart by the lowest PCI bus id, not the ordinal") {
    auto random = lesson1::random_for("selection-tie");
    std::string list = lesson1::random_visible_list(random, 8, 3 + static_cast<int>(random() % 4));
    // hgx-h200-8's bus ids rise with the machine's numbering. When the lowest listed number comes
    // first, ordinal 0 would be right by luck: move that entry to the end.
    const char lowest = *std::min_element(list.begin(), list.end(), [](char a, char b) { return a != ',' && (b == ',' || a < b); });
    if (list.front() == lowest) list = list.substr(2) + "," + lowest;
    if (!lesson1::start({"hgx-h200-8", list})) return;
    StudentCalls calls;
    expect_pick(calls, Requirements{9, 0, 100 * kGiB}, "all are the same H200: the one with the lowest bus id");
}

TEST_CASE("selection: on one GPU pick_device takes it when it qualifies and refuses when it does not") {
    if (!lesson1::start({"h200"})) return;
    StudentCalls calls;
    if (!expect_pick(calls, Requirements{9, 0, 139 * kGiB})) return;
    expect_pick(calls, Requirements{9, 0, 140 * kGiB}, "the H200 has 139.8 GiB (150109880320 bytes)");
    expect_pick(calls, Requirements{99, 0, 0}, "cudaChooseDevice would answer device 0 here; a policy refuses");
}

// "Least total device memory": a device with exactly min_memory bytes qualifies. Asking for each
// device's own size, and one byte more, is where `>` and `>=` (or `<` and `<=`) part.
TEST_CASE("selection: a device with exactly the required memory qualifies, one byte more refuses it") {
    if (!lesson1::start({"mixed-3"})) return;
    StudentCalls calls;
    for (const DeviceInfo& device : lesson1::expected_devices()) {
        const std::string size = suite::counted(device.total_memory, "byte");
        if (!expect_pick(calls, Requirements{0, 0, device.total_memory},
                         lesson1::device_name(device.ordinal) + " has exactly " + size + ": min_memory is the least "
                         "accepted, so it qualifies")) return;
        if (!expect_pick(calls, Requirements{0, 0, device.total_memory + 1},
                         "one byte more than " + lesson1::device_name(device.ordinal) + "'s " + size)) return;
    }
}

// Equal memory: the SM count decides before the bus id does (the board with more SMs sits in the
// higher PCI domain, so the bus-id rule alone picks the other).
TEST_CASE("selection: between two boards of equal memory pick_device takes the one with more SMs") {
    if (!lesson1::start({lesson1::two_domain_machine()})) return;
    StudentCalls calls;
    if (!expect_pick(calls, Requirements{9, 0, 0}, "both have 85029158912 bytes: the most SMs (132 against 114) decides, "
                     "before the PCI bus id")) return;
    expect_pick(calls, Requirements{9, 0, 80 * kGiB}, "both qualify with 80 GiB; the most SMs decides");
}
