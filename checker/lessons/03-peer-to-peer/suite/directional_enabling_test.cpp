// Criterion "directional enabling" (lesson sections 3.5 and 3.6): access is opened one direction
// at a time, with the device that gains access current.
#include <doctest/doctest.h>

#include <string>

#include "support/expectations.h"
#include "mgpu/sim/control.h"
#include "peer_access.h"
#include "support/scenario.h"
#include "support/student_calls.h"

namespace {

using namespace suite;
using mgpu::sim::peer_access_enabled;

std::string direction(int from, int to) { return std::to_string(from) + " -> " + std::to_string(to); }

// The successful cudaDeviceEnablePeerAccess that opened from -> to, if the window has one.
const mgpu::trace::ApiCall* enable_call_for(const std::vector<mgpu::trace::ApiCall>& enables, int from, int to) {
    for (const auto& call : enables) {
        if (call.device == from && !call.args.empty() && call.args[0] == to) return &call;
    }
    return nullptr;
}

// Every ordered pair is open exactly when the machine can peer it (after open_all_peer_access).
void expect_all_peer_directions_open(const std::string& after_what) {
    int wrong = 0;
    std::string first;
    for (int from = 0; from < device_count(); ++from) {
        for (int to = 0; to < device_count(); ++to) {
            if (peer_access_enabled(from, to) != machine_can_peer(from, to) && wrong++ == 0) {
                first = direction(from, to) + (machine_can_peer(from, to) ? " closed" : " open");
            }
        }
    }
    expect(wrong == 0, "after " + after_what + " every direction that can peer is open, and only those",
           "open exactly where cudaDeviceCanAccessPeer says 1",
           first + " (" + suite::counted(wrong, "direction") + " wrong)");
}

int peer_directions() {
    int count = 0;
    for (int from = 0; from < device_count(); ++from) {
        for (int to = 0; to < device_count(); ++to) count += machine_can_peer(from, to) ? 1 : 0;
    }
    return count;
}

}  // namespace

TEST_CASE("directional enabling: open_peer_access(2, 5) opens 2 -> 5 and nothing else") {
    if (!start({"hgx-h200-8", "shuffle:5"})) return;
    cudaSetDevice(2);
    StudentCalls calls;
    const cudaError_t status = calls.watch("open_peer_access(2, 5)", [] { return open_peer_access(2, 5); });
    require_status(status, cudaSuccess, "open_peer_access(2, 5)", calls);
    expect(peer_access_enabled(2, 5), "access 2 -> 5 is open", "open", "closed");
    const auto enables = calls.successful("cudaDeviceEnablePeerAccess");
    for (int from = 0; from < device_count(); ++from) {
        for (int to = 0; to < device_count(); ++to) {
            if ((from == 2 && to == 5) || !peer_access_enabled(from, to)) continue;
            expect(false, "open_peer_access(2, 5) opens no other direction (access is one way)",
                   "only 2 -> 5 open", direction(from, to) + " open too", enable_call_for(enables, from, to));
        }
    }
}

TEST_CASE("directional enabling: open_peer_access opens from `from` whatever device is current") {
    if (!start({"hgx-h200-8"})) return;
    cudaSetDevice(6);
    StudentCalls calls;
    const cudaError_t status = calls.watch("open_peer_access(1, 4)", [] { return open_peer_access(1, 4); });
    expect_status(status, cudaSuccess, "open_peer_access(1, 4) with device 6 current", calls);
    // The call made with the wrong device current is the cause; the closed direction its effect.
    for (const auto& call : calls.calls_named("cudaDeviceEnablePeerAccess")) {
        expect(call.device == 1, "cudaDeviceEnablePeerAccess is called with `from` (device 1) current",
               "device 1 current", "device " + std::to_string(call.device) + " current", &call, "3.5");
    }
    expect(peer_access_enabled(1, 4), "open_peer_access(1, 4) with device 6 current opens 1 -> 4", "1 -> 4 open",
           "1 -> 4 closed", nullptr, "3.5");
}

TEST_CASE("directional enabling: open_peer_access gives the caller's current device back") {
    if (!start({"islands-2x2", "lazy"})) return;
    cudaSetDevice(3);
    StudentCalls calls;
    const cudaError_t status = calls.watch("open_peer_access(1, 0)", [] { return open_peer_access(1, 0); });
    require_status(status, cudaSuccess, "open_peer_access(1, 0)", calls);
    expect_current_device(3, "open_peer_access(1, 0) called with device 3 current");
}

TEST_CASE("directional enabling: opening an open direction again succeeds and leaves no error") {
    if (!start({"islands-2x2"})) return;
    cudaSetDevice(0);
    StudentCalls first;
    require_status(first.watch("open_peer_access(0, 1)", [] { return open_peer_access(0, 1); }), cudaSuccess,
                   "open_peer_access(0, 1)", first);
    cudaGetLastError();
    cudaSetDevice(0);
    StudentCalls again;
    const cudaError_t status = again.watch("open_peer_access(0, 1) a second time", [] { return open_peer_access(0, 1); });
    expect_status(status, cudaSuccess, "open_peer_access(0, 1) when 0 -> 1 is already open", again);
    expect_no_error_left(again, "open_peer_access(0, 1) on an open direction");
    expect(peer_access_enabled(0, 1), "0 -> 1 is still open", "open", "closed");
}

TEST_CASE("directional enabling: open_all_peer_access opens and counts all 56 directions of hgx-h200-8") {
    if (!start({"hgx-h200-8", "shuffle:23"})) return;
    StudentCalls calls;
    const int opened = calls.watch("open_all_peer_access()", [] { return open_all_peer_access(); });
    expect(opened == peer_directions(), "open_all_peer_access() returns how many directions are open",
           std::to_string(peer_directions()), std::to_string(opened));
    expect_all_peer_directions_open("open_all_peer_access()");
}

TEST_CASE("directional enabling: open_all_peer_access on islands-2x2 counts open directions again on a second call") {
    if (!start({"islands-2x2", "lazy"})) return;
    StudentCalls first, second;
    const int opened = first.watch("open_all_peer_access()", [] { return open_all_peer_access(); });
    expect(opened == 4, "the first open_all_peer_access() returns the 4 directions within the islands", "4",
           std::to_string(opened));
    const int again = second.watch("a second open_all_peer_access()", [] { return open_all_peer_access(); });
    expect(again == 4, "a second open_all_peer_access() still returns 4 (already open counts)", "4",
           std::to_string(again));
    expect_all_peer_directions_open("two calls of open_all_peer_access()");
}
