// Criterion "cleanup" (lesson section 2.9): what the functions allocate and create, they free and
// destroy, on every path. The simulator's live-object counters are read right before and right
// after one call; the suite's own buffers are made before and freed after, outside that window.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/expectations.h"
#include "host_data.h"
#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"
#include "split_work.h"

namespace {

using namespace lesson2;

const mgpu::trace::ApiCall* first_successful(const Run& result, const std::string& name) {
    for (const auto& call : result.window)
        if (call.name == name && call.result == 0) return &call;
    return nullptr;
}

// The first call that pinned host memory, however it was pinned.
const mgpu::trace::ApiCall* first_pinning(const Run& result) {
    for (const auto& call : result.window)
        if ((call.name == "cudaMallocHost" || call.name == "cudaHostAlloc" || call.name == "cudaHostRegister") &&
            call.result == 0)
            return &call;
    return nullptr;
}

std::size_t count_successful(const Run& result, const std::string& name) {
    std::size_t count = 0;
    for (const auto& call : result.window) count += call.name == name && call.result == 0;
    return count;
}

// `refused`: the call was one that must refuse (its status is checked by the caller), so making
// nothing at all is the right answer, not a placeholder.
void expect_released(const Run& result, bool refused = false) {
    const std::string what = result.text();
    // A call that failed is judged on what it made: one that made nothing (a placeholder that
    // returns at once) has shown no releasing at all.
    const bool made_something = count_successful(result, "cudaMalloc") + count_successful(result, "cudaStreamCreate") +
                                    count_successful(result, "cudaStreamCreateWithFlags") +
                                    count_successful(result, "cudaEventCreate") +
                                    count_successful(result, "cudaEventCreateWithFlags") > 0;
    if (!made_something && !refused) suite::require_status(result.status, cudaSuccess, what, result.calls);
    for (std::size_t device = 0; device < result.bytes_before.size(); ++device) {
        if (result.bytes_after[device] == result.bytes_before[device]) continue;
        suite::expect(false, what + " frees every device buffer it allocates (cudaFree)",
                        suite::counted(result.bytes_before[device], "byte") + " in use on device " + std::to_string(device) +
                            " after the call, as before",
                        suite::counted(result.bytes_after[device], "byte") + " (" +
                            std::to_string(count_successful(result, "cudaMalloc")) + " cudaMalloc, " +
                            std::to_string(count_successful(result, "cudaFree")) + " cudaFree)",
                        first_successful(result, "cudaMalloc"));
        break;
    }
    const std::size_t streams_made =
        count_successful(result, "cudaStreamCreate") + count_successful(result, "cudaStreamCreateWithFlags");
    suite::expect(result.streams_after == result.streams_before, what + " destroys every stream it creates (cudaStreamDestroy)",
                    std::to_string(result.streams_before) + " live streams, as before",
                    std::to_string(result.streams_after) + " (" + std::to_string(streams_made) + " created, " +
                        std::to_string(count_successful(result, "cudaStreamDestroy")) + " destroyed)",
                    first_successful(result, "cudaStreamCreateWithFlags") != nullptr
                        ? first_successful(result, "cudaStreamCreateWithFlags")
                        : first_successful(result, "cudaStreamCreate"));
    const std::size_t events_made =
        count_successful(result, "cudaEventCreate") + count_successful(result, "cudaEventCreateWithFlags");
    suite::expect(result.events_after == result.events_before, what + " destroys every event it creates (cudaEventDestroy)",
                    std::to_string(result.events_before) + " live events, as before",
                    std::to_string(result.events_after) + " (" + std::to_string(events_made) + " created, " +
                        std::to_string(count_successful(result, "cudaEventDestroy")) + " destroyed)",
                    first_successful(result, "cudaEventCreate") != nullptr ? first_successful(result, "cudaEventCreate")
                                                                           : first_successful(result, "cudaEventCreateWithFlags"));
    suite::expect(result.pinned_after == result.pinned_before,
                    what + " gives back any page-locked memory it makes (cudaFreeHost, cudaHostUnregister)",
                    std::to_string(result.pinned_before) + " page-locked buffers, as before",
                    std::to_string(result.pinned_after), first_pinning(result));
}

}  // namespace

TEST_CASE("cleanup: scale_on_devices with device times releases everything on hgx-h200-8") {
    if (!suite::start({"hgx-h200-8", "lazy"}, "even plan of 800011 floats")) return;
    Run result;
    run_any_status(result, Driver::OneThread, even_plan(800011, 8), 501, 4, true);
    expect_released(result);
}

TEST_CASE("cleanup: scale_on_devices releases everything on mixed-3 under a shuffled schedule") {
    if (!suite::start({"mixed-3", "shuffle:29"}, "plan of 123457 floats weighted by memory bandwidth")) return;
    Run result;
    run_any_status(result, Driver::OneThread, weighted_plan(123457, bandwidth_weights()), 502, 1);
    expect_released(result);
}

TEST_CASE("cleanup: scale_with_threads releases everything each thread made") {
    if (!suite::start({"pcie-4", "shuffle:31"}, "even plan of 250007 floats")) return;
    Run result;
    run_any_status(result, Driver::Threads, even_plan(250007, 4), 503, 2);
    expect_released(result);
}

TEST_CASE("cleanup: after a failed allocation on the third device, nothing is left behind") {
    if (!suite::start({"pcie-4"}, "even plan of 40000 floats; the third cudaMalloc fails")) return;
    if (!inject_malloc_failure(3)) return;
    const std::vector<Share> plan = even_plan(40000, 4);
    std::vector<float> in(40000, 1.0f), out(40000, 0.0f);
    cudaSetDevice(1);
    const std::size_t streams = mgpu::sim::live_streams(), events = mgpu::sim::live_events();
    std::vector<std::size_t> bytes;
    for (int d = 0; d < suite::device_count(); ++d) bytes.push_back(mgpu::sim::device_bytes_in_use(d));
    suite::StudentCalls calls;
    const std::string what = "scale_on_devices when the third cudaMalloc fails";
    const cudaError_t status = calls.watch(what, [&] { return scale_on_devices(out.data(), in.data(), 2.0f, plan, nullptr); });
    suite::require_status(status, cudaErrorMemoryAllocation, what, calls);
    mgpu::sim::drain_all();
    bool same = mgpu::sim::live_streams() == streams && mgpu::sim::live_events() == events;
    for (int d = 0; d < suite::device_count(); ++d) same = same && mgpu::sim::device_bytes_in_use(d) == bytes[d];
    suite::expect(same, "after a failure, what the first devices got is released too (release on every path)",
                    "as many buffers, streams and events as before the call",
                    "the first devices' buffers, streams or events are still there");
}

// A refusal that comes only once the work has begun must release what was made for the first shares.
TEST_CASE("cleanup: a plan with more shares than devices is refused with nothing left behind") {
    if (!suite::start({"pcie-4"}, "5 shares of 50000 floats on 4 devices")) return;
    for (Driver driver : {Driver::OneThread, Driver::Threads}) {
        Run result;
        run_refused(result, driver, 911, 2);
        expect_released(result, true);
    }
}

TEST_CASE("cleanup: free_host_buffer gives the page-locked memory of allocate_host_buffer back") {
    if (!suite::start({"h200"}, "three buffers of 4096 floats")) return;
    const std::size_t before = mgpu::sim::live_page_locked_ranges();
    suite::StudentCalls allocating;
    std::vector<float*> buffers;
    for (int i = 0; i < 3; ++i)
        buffers.push_back(allocating.watch("allocate_host_buffer(4096)", [] { return allocate_host_buffer(4096); }));
    for (float* buffer : buffers)
        if (buffer == nullptr)
            mgpu::check::fail_and_stop({"allocate_host_buffer(4096) gives a buffer (the rest of this check needs it)",
                                        "a pointer", "nullptr", "", 0, false, "2.6"});
    suite::StudentCalls freeing;
    freeing.watch("free_host_buffer", [&] {
        for (float* buffer : buffers) free_host_buffer(buffer);
        free_host_buffer(nullptr);
    });
    const std::size_t after = mgpu::sim::live_page_locked_ranges();
    suite::expect(after == before, "free_host_buffer releases what allocate_host_buffer pinned (cudaFreeHost, or "
                    "cudaHostUnregister for memory pinned in place)",
                    std::to_string(before) + " page-locked buffers, as before the three buffers",
                    std::to_string(after));
    suite::expect_no_error_left(freeing, "free_host_buffer");
}
