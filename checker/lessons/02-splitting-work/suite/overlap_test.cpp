// Criterion "overlap across devices" (lesson section 2.6): the devices work at the same time. The
// host must queue every device's work before it waits for any (no synchronous copy, no
// synchronisation, no pageable host memory in the issue loop), and then, on the modelled timeline,
// each device starts its share before the device before it has finished, from one host thread or from
// a thread per device (section 2.7: all started before the first join). The comparison is between
// the devices' own intervals, so it holds whatever the cost model's figures are.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <cuda_runtime.h>

#include "support/expectations.h"
#include "host_data.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"
#include "split_work.h"

namespace {

using namespace lesson2;
using mgpu::trace::OpKind;

// Calls after which the host stands still until a device has done something.
const std::set<std::string>& waiting_calls() {
    static const std::set<std::string> names{"cudaMemcpy",          "cudaMemcpyPeer",        "cudaDeviceSynchronize",
                                             "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemset",
                                             "cudaMallocHost",       "cudaHostAlloc",         "cudaFreeHost",
                                             "cudaFree",             "cudaHostRegister"};
    return names;
}

bool pins_host_memory(const mgpu::trace::ApiCall& call) {
    return call.name == "cudaMallocHost" || call.name == "cudaHostAlloc" || call.name == "cudaHostRegister";
}

// The caller's in and out are page-locked already (the header says so): a function that pins buffers
// of its own pays for the pinning on every call, far more than the copies it was meant to speed up.
void expect_pins_nothing_of_its_own(const Run& result) {
    for (const auto& call : result.window) {
        if (!pins_host_memory(call)) continue;
        suite::expect(false,
                        "scale_on_devices pins no host memory of its own: it copies straight from the caller's "
                        "page-locked in and out (pin once, outside the work)",
                        "no cudaMallocHost, cudaHostAlloc or cudaHostRegister during the call",
                        call.text.empty() ? call.name : call.text, &call);
        return;
    }
}

// scale_on_devices is the one-thread way (the header's Tasks 4 and 6): every share queued from the
// calling thread. Threads it starts itself would wait each for its own device, which is
// scale_with_threads' design, and the waits below would be blamed instead of the real cause.
bool expect_driven_by_calling_thread(const Run& result) {
    if (result.driver != Driver::OneThread) return true;
    for (std::size_t d = 0; d < result.shares.size(); ++d) {
        const ShareWork& work = result.shares[d];
        if (work.copy_in == nullptr || work.copy_in->host_thread == result.caller_thread) continue;
        suite::expect(false,
                        "scale_on_devices drives every device from the calling host thread (split_work.h, Tasks 4 "
                        "and 6): it queues each device's work in turn, then waits for each",
                        "share " + std::to_string(d) + "'s work queued by the calling thread",
                        "share " + std::to_string(d) + "'s input copy was queued by another host thread, one that "
                        "scale_on_devices started: a thread per device is scale_with_threads (Task 5); here queue "
                        "every device's work from the caller's thread, then wait",
                        work.copy_in, "2.4");
        return false;
    }
    return true;
}

// Between the first share's input copy and the last share's output copy, nothing waits.
void expect_issue_loop_never_waits(const Run& result) {
    if (!expect_driven_by_calling_thread(result)) return;
    std::uint64_t first = 0, last = 0;
    for (const ShareWork& work : result.shares) {
        if (work.copy_in != nullptr && (first == 0 || work.copy_in->seq < first)) first = work.copy_in->seq;
        if (work.copy_out != nullptr && work.copy_out->seq > last) last = work.copy_out->seq;
    }
    if (!suite::expect(first != 0 && last != 0, "the shares are copied in and out with cudaMemcpyAsync",
                         "copies from in + first and to out + first", "none found", nullptr, "2.4"))
        return;
    for (const auto& call : result.window) {
        if (call.seq < first || call.seq > last) continue;
        if (call.name == "cudaMemcpy" || (waiting_calls().count(call.name) == 1 && call.seq != first && call.seq != last)) {
            const bool pinning = pins_host_memory(call) || call.name == "cudaFreeHost";
            suite::expect(false,
                            "the host queues every device's work before it waits for any: " + call.name +
                                " inside the issue loop holds the next device back" +
                                (pinning ? " (pinning and unpinning host memory take milliseconds)" : ""),
                            "only cudaSetDevice, cudaMemcpyAsync, kernel launches and event records between the first "
                            "input copy and the last output copy",
                            call.text.empty() ? call.name : call.text, &call);
            suite::attach_timeline(result.calls, "scale_on_devices");
            return;
        }
    }
    if (suite::kOnRealGpu) return;   // CUPTI's trace does not say whether a copy's host end was pinned
    for (const auto& op : result.calls.ops()) {
        const bool host_copy = op.kind == OpKind::MemcpyHtoD || op.kind == OpKind::MemcpyDtoH;
        if (!host_copy || op.pinned_host) continue;
        const mgpu::trace::ApiCall* at = nullptr;
        for (const auto& call : result.window)
            if (call.seq == op.api_seq) at = &call;
        suite::expect(false,
                        "every copy between host and device uses page-locked host memory (a pageable one makes the "
                        "host wait for the copy)",
                        "copies from and to the caller's page-locked in and out, or cudaMallocHost buffers",
                        "a " + std::string(mgpu::trace::to_string(op.kind)) + " copy of " + std::to_string(op.bytes) +
                            " bytes from pageable memory",
                        at);
        return;
    }
}

// A share whose work ran on another device than its own is device discipline's finding: comparing it
// here would measure how the host threads happened to interleave on that one device.
bool ran_on_its_own_device(const ShareWork& work, std::size_t d) {
    for (const auto& op : work.ops)
        if (op.device != static_cast<int>(d)) return false;
    return true;
}

// Each device with work starts its share before the previous device with work has finished.
void expect_devices_overlap(const Run& result) {
    const ShareWork* previous = nullptr;
    std::size_t previous_index = 0;
    for (std::size_t d = 0; d < result.shares.size(); ++d) {
        const ShareWork& work = result.shares[d];
        if (work.ops.empty() || !ran_on_its_own_device(work, d)) continue;
        const bool threads = result.driver == Driver::Threads;
        const std::string late = threads ? " us: its thread queued the work only after the thread of device " +
                                               std::to_string(previous_index) +
                                               " had finished (was it joined before the next one started?)"
                                         : " us: the host gave it its work only after the device before had finished";
        if (previous != nullptr &&
            !suite::expect(work.start_us() < previous->end_us(),
                             "device " + std::to_string(d) + " starts its share while device " +
                                 std::to_string(previous_index) + " is still working on its own",
                             "a start before " + std::to_string(previous->end_us()) + " us, when device " +
                                 std::to_string(previous_index) + " finished",
                             "it started at " + std::to_string(work.start_us()) + late, work.copy_in,
                             threads ? "2.7" : "")) {
            suite::attach_timeline(result.calls, "scale_on_devices");
            return;
        }
        previous = &work;
        previous_index = d;
    }
}

}  // namespace

TEST_CASE("overlap across devices: scale_on_devices never waits while it queues work, on hgx-h200-8") {
    if (!suite::start({"hgx-h200-8"}, "even plan of 8388613 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan((std::size_t{1} << 23) + 5, 8), 301, 0);
    expect_pins_nothing_of_its_own(result);
    expect_issue_loop_never_waits(result);
}

TEST_CASE("overlap across devices: the eight devices of hgx-h200-8 work at the same time") {
    if (!suite::start({"hgx-h200-8"}, "even plan of 8388613 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan((std::size_t{1} << 23) + 5, 8), 302, 2);
    expect_devices_overlap(result);
}

TEST_CASE("overlap across devices: the four devices of pcie-4 work at the same time under a lazy schedule") {
    if (!suite::start({"pcie-4", "lazy"}, "even plan of 4194311 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan((std::size_t{1} << 22) + 7, 4), 303, 1);
    expect_issue_loop_never_waits(result);
    expect_devices_overlap(result);
}

TEST_CASE("overlap across devices: the three different devices of mixed-3 work at the same time") {
    if (!suite::start({"mixed-3", "shuffle:19"}, "plan of 6000001 floats weighted by memory bandwidth")) return;
    Run result;
    run(result, Driver::OneThread, weighted_plan(6000001, bandwidth_weights()), 304, 0);
    expect_issue_loop_never_waits(result);
    expect_devices_overlap(result);
}

TEST_CASE("overlap across devices: scale_with_threads's threads keep the four devices of pcie-4 working at the same time") {
    if (!suite::start({"pcie-4"}, "even plan of 4194311 floats, one thread per share")) return;
    Run result;
    run(result, Driver::Threads, even_plan((std::size_t{1} << 22) + 7, 4), 306, 1);
    expect_devices_overlap(result);
}

TEST_CASE("overlap across devices: on one GPU nothing waits between the input copy and the output copy") {
    if (!suite::start({"h200"}, "one share of 1048579 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan(1048579, 1), 305, 0);
    expect_issue_loop_never_waits(result);
}

TEST_CASE("overlap across devices: allocate_host_buffer gives page-locked memory, nullptr for 0 floats") {
    if (!suite::start({"h200"}, "buffers of 1000 and 0 floats")) return;
    const std::size_t pinned_before = mgpu::sim::live_page_locked_ranges();
    suite::StudentCalls calls;
    float* buffer = calls.watch("allocate_host_buffer(1000)", [] { return allocate_host_buffer(1000); });
    if (!suite::expect(buffer != nullptr, "allocate_host_buffer(1000) gives a buffer", "a pointer", "nullptr"))
        return;
    cudaPointerAttributes attributes{};
    const cudaError_t status = cudaPointerGetAttributes(&attributes, buffer);
    suite::expect(status == cudaSuccess && attributes.type == cudaMemoryTypeHost &&
                        mgpu::sim::live_page_locked_ranges() == pinned_before + 1,
                    "allocate_host_buffer gives page-locked memory (cudaMallocHost, or cudaHostRegister on memory "
                    "of its own), which the copy engines use without holding up the host",
                    "cudaPointerGetAttributes answers cudaMemoryTypeHost",
                    "pageable memory (malloc or new): every cudaMemcpyAsync from it makes the host wait",
                    nullptr);
    suite::StudentCalls empty;
    float* none = empty.watch("allocate_host_buffer(0)", [] { return allocate_host_buffer(0); });
    suite::expect(none == nullptr, "allocate_host_buffer(0) gives nullptr", "nullptr", "a pointer");
    suite::StudentCalls freeing;
    freeing.watch("free_host_buffer", [&] {
        free_host_buffer(buffer);
        free_host_buffer(none);
    });
}

// 2^58 floats are 2^60 bytes, more than any machine's address space: cudaMallocHost answers
// cudaErrorMemoryAllocation on the simulator and on a real GPU alike.
TEST_CASE("overlap across devices: allocate_host_buffer of more memory than there is gives nullptr and leaves no error") {
    if (!suite::start({"h200"}, "a buffer of 2^58 floats (2^60 bytes)")) return;
    const std::size_t huge = std::size_t{1} << 58;
    // A placeholder that always answers nullptr shows nothing here: the function must work first.
    suite::StudentCalls working;
    float* small = working.watch("allocate_host_buffer(1000)", [] { return allocate_host_buffer(1000); });
    if (!suite::expect(small != nullptr, "allocate_host_buffer(1000) gives a buffer (the rest of this check needs it)",
                         "a pointer", "nullptr"))
        return;
    free_host_buffer(small);
    suite::StudentCalls calls;
    float* buffer = calls.watch("allocate_host_buffer(2^58)", [&] { return allocate_host_buffer(huge); });
    if (!suite::expect(buffer == nullptr, "allocate_host_buffer(2^58) gives nullptr: 2^60 bytes cannot be had",
                         "nullptr", "a pointer")) {
        free_host_buffer(buffer);
        return;
    }
    suite::expect_no_error_left(calls, "allocate_host_buffer(2^58)");
}

TEST_CASE("overlap across devices: with the host buffers of allocate_host_buffer, the devices of pcie-4 work at the same time") {
    if (!suite::start({"pcie-4"}, "even plan of 4194304 floats in the student's own host buffers")) return;
    Run result;
    run_with_student_buffers(result, even_plan(std::size_t{1} << 22, 4), 0);
    expect_devices_overlap(result);
}
