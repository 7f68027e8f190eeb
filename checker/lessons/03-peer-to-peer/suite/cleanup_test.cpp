// Criterion "cleanup" (lesson section 3.11): what the code opens, allocates and creates, it
// closes, frees and destroys. Leak checks compare the simulator's live-object counters around
// one call; the suite's own buffers are made before and freed after, outside that window.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "support/device_data.h"
#include "support/expectations.h"
#include "mgpu/sim/control.h"
#include "peer_access.h"
#include "support/scenario.h"
#include "support/student_calls.h"

namespace {

using namespace suite;

int open_directions() {
    int count = 0;
    for (int from = 0; from < device_count(); ++from) {
        for (int to = 0; to < device_count(); ++to) count += mgpu::sim::peer_access_enabled(from, to) ? 1 : 0;
    }
    return count;
}

// open_peer_access with `from` current, so that the direction opens whatever the details of the
// student's enabling code: this criterion is about closing.
void open_direction(int from, int to) {
    cudaSetDevice(from);
    StudentCalls calls;
    const std::string what = "open_peer_access(" + std::to_string(from) + ", " + std::to_string(to) + ")";
    require_status(calls.watch(what, [&] { return open_peer_access(from, to); }), cudaSuccess, what, calls);
}

void expect_all_closed_by(int closed, int were_open, const StudentCalls& calls) {
    expect(closed == were_open, "close_all_peer_access() returns how many directions it closed",
           std::to_string(were_open), std::to_string(closed));
    const int still_open = open_directions();
    expect(still_open == 0, "no direction is open after close_all_peer_access() (cudaDeviceDisablePeerAccess for each)",
           "0 open", std::to_string(still_open) + " still open");
    expect_no_error_left(calls, "close_all_peer_access()");
}

struct PipelineRun {
    StudentCalls calls;
    std::vector<std::size_t> bytes_before, bytes_after;
    std::size_t streams_before = 0, streams_after = 0, events_before = 0, events_after = 0;
};

// One pipelined_scale call, results not judged here (that is async overlap), counters around it.
void run_pipeline(PipelineRun& run, int dst_device, int src_device, std::size_t n, std::size_t chunk) {
    DeviceFloats src(src_device, n), dst(dst_device, n);
    src.upload(random_floats(n, 40));
    dst.fill_with_guard_value();
    for (int device = 0; device < device_count(); ++device) {
        run.bytes_before.push_back(mgpu::sim::device_bytes_in_use(device));
    }
    run.streams_before = mgpu::sim::live_streams();
    run.events_before = mgpu::sim::live_events();
    cudaSetDevice(src_device);
    const cudaError_t status = run.calls.watch("pipelined_scale",
        [&] { return pipelined_scale(dst.data(), dst_device, src.data(), src_device, n, chunk, 1.5f); });
    require_status(status, cudaSuccess, "pipelined_scale", run.calls);
    mgpu::sim::drain_all();
    for (int device = 0; device < device_count(); ++device) {
        run.bytes_after.push_back(mgpu::sim::device_bytes_in_use(device));
    }
    run.streams_after = mgpu::sim::live_streams();
    run.events_after = mgpu::sim::live_events();
}

// Device memory in use is back where it was before the call; points at the call's cudaMalloc.
void expect_memory_returned(const std::vector<std::size_t>& before, const std::vector<std::size_t>& after,
                            const StudentCalls& calls, const std::string& what) {
    for (std::size_t device = 0; device < before.size(); ++device) {
        if (after[device] == before[device]) continue;
        const auto allocations = calls.successful("cudaMalloc");
        const auto frees = calls.successful("cudaFree");
        expect(false, what + " frees every buffer it allocates (cudaFree)",
               suite::counted(before[device], "byte") + " in use on device " + std::to_string(device) + " after the call, as before",
               suite::counted(after[device], "byte") + " (" + std::to_string(allocations.size()) + " cudaMalloc, " +
                   std::to_string(frees.size()) + " cudaFree)",
               allocations.empty() ? nullptr : &allocations.front());
        return;
    }
}

// The handle a creating call produced, from its recorded output ("... -> stream#17"); 0 when the
// trace does not show it.
long long created_handle(const mgpu::trace::ApiCall& call, const std::string& kind) {
    const std::string marker = kind + "#";
    const auto at = call.text.rfind(marker);
    if (at == std::string::npos) return 0;
    return std::atoll(call.text.c_str() + at + marker.size());
}

// The creation whose handle was never destroyed, so that `at` points at the line that leaked;
// the first creation when the trace cannot tell them apart.
const mgpu::trace::ApiCall* leaked_creation(const std::vector<mgpu::trace::ApiCall>& created,
                                            const std::vector<mgpu::trace::ApiCall>& destroyed, const std::string& kind) {
    std::set<long long> gone;
    for (const auto& call : destroyed)
        if (!call.args.empty()) gone.insert(call.args.front());
    for (const auto& call : created) {
        const long long handle = created_handle(call, kind);
        if (handle != 0 && gone.count(handle) == 0) return &call;
    }
    return created.empty() ? nullptr : &created.front();
}

void expect_destroyed(std::size_t before, std::size_t after, const StudentCalls& calls, const std::string& kind,
                      const std::vector<std::string>& create_names, const std::string& destroy_name) {
    std::vector<mgpu::trace::ApiCall> created;
    for (const auto& name : create_names) {
        for (const auto& call : calls.successful(name)) created.push_back(call);
    }
    std::sort(created.begin(), created.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
    const std::vector<mgpu::trace::ApiCall> destroyed = calls.successful(destroy_name);
    expect(after == before, "pipelined_scale destroys every " + kind + " it creates (" + destroy_name + ")",
           std::to_string(before) + " live " + kind + "s after the call, as before",
           std::to_string(after) + " live (" + std::to_string(created.size()) + " created, " +
               std::to_string(destroyed.size()) + " destroyed)",
           leaked_creation(created, destroyed, kind), "3.10");
}

}  // namespace

TEST_CASE("cleanup: close_all_peer_access closes every direction open_all_peer_access opened") {
    if (!start({"hgx-h200-8", "lazy"})) return;
    StudentCalls opening;
    const int opened = opening.watch("open_all_peer_access()", [] { return open_all_peer_access(); });
    const int were_open = open_directions();
    if (!expect(were_open > 0, "open_all_peer_access() opens directions for close_all_peer_access() to close",
                "56 directions open", std::to_string(were_open) + " open (open_all_peer_access returned " +
                                         std::to_string(opened) + ")")) {
        return;
    }
    cudaGetLastError();
    cudaSetDevice(2);
    StudentCalls calls;
    const int closed = calls.watch("close_all_peer_access()", [] { return close_all_peer_access(); });
    expect_all_closed_by(closed, were_open, calls);
}

TEST_CASE("cleanup: close_all_peer_access closes single directions, and a second call finds nothing") {
    if (!start({"islands-2x2", "shuffle:41"})) return;
    open_direction(0, 1);
    open_direction(3, 2);
    const int were_open = open_directions();
    cudaGetLastError();
    StudentCalls calls;
    const int closed = calls.watch("close_all_peer_access()", [] { return close_all_peer_access(); });
    expect_all_closed_by(closed, were_open, calls);
    StudentCalls again;
    const int closed_again = again.watch("a second close_all_peer_access()", [] { return close_all_peer_access(); });
    expect(closed_again == 0, "a second close_all_peer_access() has nothing left to close", "0",
           std::to_string(closed_again));
    expect_no_error_left(again, "a second close_all_peer_access()");
}

// Access is per process: a direction other code opened belongs to that code. open_peer_access
// meets it as cudaErrorPeerAccessAlreadyEnabled and succeeds; close_all_peer_access must leave it open.
TEST_CASE("cleanup: close_all_peer_access leaves open a direction that other code opened") {
    if (!start({"hgx-h200-8", "shuffle:45"})) return;
    cudaSetDevice(4);
    REQUIRE(cudaDeviceEnablePeerAccess(6, 0) == cudaSuccess);   // other code, before the student's
    // What open_peer_access returns here is graded by directional enabling; this case is about closing.
    StudentCalls opening;
    opening.watch("open_peer_access(4, 6) on a direction already open", [] { return open_peer_access(4, 6); });
    open_direction(1, 3);
    cudaGetLastError();
    StudentCalls calls;
    const int closed = calls.watch("close_all_peer_access()", [] { return close_all_peer_access(); });
    const auto disables = calls.calls_named("cudaDeviceDisablePeerAccess");
    const mgpu::trace::ApiCall* disable_4_6 = nullptr;
    for (const auto& disable : disables) {
        if (disable.device == 4 && !disable.args.empty() && disable.args[0] == 6) disable_4_6 = &disable;
    }
    expect(mgpu::sim::peer_access_enabled(4, 6),
           "a direction that was open before open_peer_access(4, 6) asked stays open: it is not yours to close",
           "4 -> 6 still open (open_peer_access met cudaErrorPeerAccessAlreadyEnabled and opened nothing)",
           "4 -> 6 closed by close_all_peer_access", disable_4_6, "3.5");
    expect(!mgpu::sim::peer_access_enabled(1, 3), "the direction open_peer_access(1, 3) opened is closed",
           "1 -> 3 closed", "1 -> 3 still open");
    expect(closed >= 1, "close_all_peer_access() counts the direction it closed", "1", std::to_string(closed));
    expect_no_error_left(calls, "close_all_peer_access()");
}

TEST_CASE("cleanup: close_all_peer_access gives the caller's current device back") {
    if (!start({"hgx-h200-8"})) return;
    open_direction(1, 6);
    open_direction(2, 7);
    cudaGetLastError();
    cudaSetDevice(5);
    StudentCalls calls;
    const int closed = calls.watch("close_all_peer_access()", [] { return close_all_peer_access(); });
    if (!expect(closed > 0, "close_all_peer_access() closes the open directions", "2", std::to_string(closed))) return;
    expect_current_device(5, "close_all_peer_access() called with device 5 current");
}

TEST_CASE("cleanup: pipelined_scale gives back any device memory it allocates") {
    if (!start({"hgx-h200-8"}, "65537 floats from device 2 to 4 in chunks of 8192")) return;
    PipelineRun run;
    run_pipeline(run, 4, 2, 65537, 8192);
    expect_memory_returned(run.bytes_before, run.bytes_after, run.calls, "pipelined_scale");
}

TEST_CASE("cleanup: pipelined_scale destroys the streams it creates") {
    if (!start({"islands-2x2", "lazy"}, "50000 floats from device 1 to 2 in chunks of 7000")) return;
    PipelineRun run;
    run_pipeline(run, 2, 1, 50000, 7000);
    expect_destroyed(run.streams_before, run.streams_after, run.calls, "stream",
                     {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority"},
                     "cudaStreamDestroy");
}

TEST_CASE("cleanup: pipelined_scale destroys the events it creates") {
    if (!start({"hgx-h200-8", "shuffle:43"}, "50000 floats from device 7 to 3 in chunks of 7000")) return;
    PipelineRun run;
    run_pipeline(run, 3, 7, 50000, 7000);
    expect_destroyed(run.events_before, run.events_after, run.calls, "event",
                     {"cudaEventCreate", "cudaEventCreateWithFlags"}, "cudaEventDestroy");
}

TEST_CASE("cleanup: scale_from_peer without P2P gives back any device memory it allocates") {
    const std::size_t n = 70001;
    if (!start({"pcie-4", "lazy"}, "70001 floats from device 3 to 0")) return;
    DeviceFloats src(3, n), dst(0, n);
    src.upload(random_floats(n, 42));
    dst.fill_with_guard_value();
    std::vector<std::size_t> before, after;
    for (int device = 0; device < device_count(); ++device) before.push_back(mgpu::sim::device_bytes_in_use(device));
    cudaSetDevice(3);
    StudentCalls calls;
    const std::string what = "scale_from_peer(dst on 0, src on 3, n = 70001)";
    const cudaError_t status = calls.watch(what, [&] { return scale_from_peer(dst.data(), 0, src.data(), 3, n, 2.5f); });
    require_status(status, cudaSuccess, what, calls);
    mgpu::sim::drain_all();
    for (int device = 0; device < device_count(); ++device) after.push_back(mgpu::sim::device_bytes_in_use(device));
    expect_memory_returned(before, after, calls, "scale_from_peer");
}

// The one-device counterpart of the three cases above, so that a machine with one GPU checks them too.
TEST_CASE("cleanup: pipelined_scale on one device frees its buffer and destroys its streams and events") {
    if (!start({"h200"}, "90001 floats on device 0 in chunks of 10000")) return;
    PipelineRun run;
    run_pipeline(run, 0, 0, 90001, 10000);
    expect_memory_returned(run.bytes_before, run.bytes_after, run.calls, "pipelined_scale");
    expect_destroyed(run.streams_before, run.streams_after, run.calls, "stream",
                     {"cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority"},
                     "cudaStreamDestroy");
    expect_destroyed(run.events_before, run.events_after, run.calls, "event",
                     {"cudaEventCreate", "cudaEventCreateWithFlags"}, "cudaEventDestroy");
}
