// Criterion "peer checks" (lesson section 3.4): ask before trusting a pair to peer.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "support/expectations.h"
#include "mgpu/sim/control.h"
#include "peer_access.h"
#include "support/scenario.h"
#include "support/student_calls.h"

namespace {

using namespace suite;

std::string yes_no(bool value) { return value ? "true" : "false"; }

// can_reach for every ordered pair (self included) against the machine's own answer.
void expect_peer_matrix() {
    StudentCalls calls;
    const int devices = device_count();
    int wrong = 0;
    std::string first;
    bool first_expected = false;
    for (int from = 0; from < devices; ++from) {
        for (int to = 0; to < devices; ++to) {
            const bool answer = calls.watch("can_reach(" + std::to_string(from) + ", " + std::to_string(to) + ")",
                                            [&] { return can_reach(from, to); });
            const bool expected = machine_can_peer(from, to);
            if (answer != expected && wrong++ == 0) {
                first = "can_reach(" + std::to_string(from) + ", " + std::to_string(to) + ")";
                first_expected = expected;
            }
        }
    }
    if (wrong > 0) {
        expect(false, first, yes_no(first_expected),
               yes_no(!first_expected) + " (" + std::to_string(wrong) + " of " + std::to_string(devices * devices) +
                   " ordered pairs answered wrong)");
    }
    expect_no_error_left(calls, "can_reach on every pair");
}

void expect_refused_without_enabling(int from, int to) {
    StudentCalls calls;
    const std::string call = "open_peer_access(" + std::to_string(from) + ", " + std::to_string(to) + ")";
    const cudaError_t status = calls.watch(call, [&] { return open_peer_access(from, to); });
    expect_status(status, cudaErrorPeerAccessUnsupported, call, calls);
    const auto enables = calls.calls_named("cudaDeviceEnablePeerAccess");
    expect(enables.empty(), call + " refuses without calling cudaDeviceEnablePeerAccess (can_reach says no first)",
           "no cudaDeviceEnablePeerAccess call",
           enables.empty() ? "" : enables.front().text + " with device " + std::to_string(enables.front().device) +
                                      " current, returning " + error_text(enables.front().result),
           enables.empty() ? nullptr : &enables.front());
    expect_no_error_left(calls, call);
}

}  // namespace

TEST_CASE("peer checks: can_reach matches every pair of hgx-h200-8 and never a device and itself") {
    if (!start({"hgx-h200-8"})) return;
    expect_peer_matrix();
}

TEST_CASE("peer checks: can_reach on islands-2x2 reaches within an island and never across") {
    if (!start({"islands-2x2", "lazy"})) return;
    expect_peer_matrix();
}

TEST_CASE("peer checks: can_reach on two visible devices of hgx-h200-8") {
    if (!start({"hgx-h200-8", "eager", "0,1"})) return;
    expect_peer_matrix();
}

TEST_CASE("peer checks: can_reach at and past the last device answers without leaving an error") {
    if (!start({"hgx-h200-8"})) return;
    StudentCalls calls;
    struct Ask {
        int from, to;
        bool expected;
    };
    // 7 is the last of the 8 devices; 8 and -1 are not devices (the runtime answers 101 for them).
    const Ask asks[] = {{0, 7, true}, {7, 0, true}, {0, 8, false}, {8, 0, false}, {-1, 0, false}, {0, -1, false}};
    for (const Ask& ask : asks) {
        const std::string call = "can_reach(" + std::to_string(ask.from) + ", " + std::to_string(ask.to) + ")";
        const bool answer = calls.watch(call, [&] { return can_reach(ask.from, ask.to); });
        expect(answer == ask.expected, call, yes_no(ask.expected), yes_no(answer));
        expect_no_error_left(calls, call);
        cudaGetLastError();   // each ask is judged on its own
    }
}

TEST_CASE("peer checks: open_peer_access refuses a pair across islands without asking the runtime") {
    if (!start({"islands-2x2", "shuffle:11"})) return;
    expect_refused_without_enabling(0, 2);
    expect(!mgpu::sim::peer_access_enabled(0, 2), "access 0 -> 2 stays closed", "closed", "open");
}

TEST_CASE("peer checks: open_peer_access refuses a device and itself without asking the runtime") {
    if (!start({"hgx-h200-8"})) return;
    cudaSetDevice(3);
    expect_refused_without_enabling(3, 3);
}

// The one case of this criterion that a machine with a single GPU can host (the cuda backend runs
// it on one real GPU, where device 0 has no peer and device 1 does not exist). On a real machine with
// more GPUs the same scenario sees all of them, so the expected answers are the machine's own.
TEST_CASE("peer checks: on one GPU, no device is a peer and open_peer_access(0, 0) asks nothing") {
    if (!start({"h200"})) return;
    StudentCalls calls;
    for (const auto& [from, to] : {std::pair{0, 0}, std::pair{0, 1}, std::pair{1, 0}}) {
        const std::string call = "can_reach(" + std::to_string(from) + ", " + std::to_string(to) + ")";
        const bool truth = machine_can_peer(from, to);
        const bool answer = calls.watch(call, [&] { return can_reach(from, to); });
        expect(answer == truth, call, truth ? "true" : "false", answer ? "true" : "false");
        expect_no_error_left(calls, call);
        cudaGetLastError();   // each ask is judged on its own
    }
    cudaSetDevice(0);
    expect_refused_without_enabling(0, 0);
}
