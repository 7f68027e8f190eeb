// Criterion "device discipline" (lesson section 2.5): share d's buffer, copies and kernel belong to
// device d, each queued with device d current; threads drive their own device; the caller's
// current device comes back. Read from the trace: the current device of every call, the device
// each operation ran on, and the host thread that made each call.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>

#include "support/expectations.h"
#include "host_data.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"
#include "split_work.h"

namespace {

using namespace lesson2;
using mgpu::trace::OpKind;

std::string share_name(std::size_t d) { return "share " + std::to_string(d); }
std::string device_name(int d) { return "device " + std::to_string(d); }

const mgpu::trace::ApiCall* launch_of(const Run& result, const mgpu::trace::DeviceOp& op) {
    for (const auto& call : result.window)
        if (call.seq == op.api_seq) return &call;
    return nullptr;
}

// A cudaMalloc made with device d current, large enough for the share.
const mgpu::trace::ApiCall* allocation_for(const Run& result, int d, std::size_t bytes) {
    for (const auto& call : result.window)
        if (call.name == "cudaMalloc" && call.result == 0 && call.device == d && !call.args.empty() &&
            static_cast<std::size_t>(call.args[0]) >= bytes)
            return &call;
    return nullptr;
}

// A cudaSetDevice(d) on the thread that queued the share's input copy, before that copy.
bool made_current(const Run& result, int d, const mgpu::trace::ApiCall& copy_in) {
    for (const auto& call : result.window)
        if (call.name == "cudaSetDevice" && call.result == 0 && !call.args.empty() && call.args[0] == d &&
            call.seq < copy_in.seq && call.host_thread == copy_in.host_thread)
            return true;
    return false;
}

// Checks one share, the cause first (its device never made current, its buffer elsewhere), then
// what follows from it. Returns false at the first share that breaks a rule: the others usually
// break it the same way.
bool expect_share_on_its_device(const Run& result, std::size_t d) {
    const int device = static_cast<int>(d);
    const ShareWork& work = result.shares[d];
    if (!suite::expect(work.copy_in != nullptr, share_name(d) + "'s input is copied to a device with cudaMemcpyAsync",
                         "a copy of " + suite::counted(result.plan[d].count * sizeof(float), "byte") + " from in + " +
                             std::to_string(result.plan[d].first),
                         "no host-to-device copy from there, nor one of that size", nullptr, "2.4"))
        return false;
    if (!suite::expect(made_current(result, device, *work.copy_in),
                         share_name(d) + "'s device is made current before its work: cudaSetDevice(" +
                             std::to_string(device) + ")",
                         "cudaSetDevice(" + std::to_string(device) + ") before its allocation, copies and kernel",
                         "no cudaSetDevice(" + std::to_string(device) + ") before its work: it went to device " +
                             std::to_string(work.copy_in->device) + ", the one that was current",
                         work.copy_in))
        return false;
    bool ok = true;
    const std::size_t bytes = result.plan[d].count * sizeof(float);
    ok &= suite::expect(allocation_for(result, device, bytes) != nullptr,
                          share_name(d) + "'s device buffer is allocated with " + device_name(device) + " current",
                          "cudaMalloc of at least " + suite::counted(bytes, "byte") + " with " + device_name(device) +
                              " current",
                          "no such cudaMalloc", work.copy_in);
    bool kernel_seen = false;
    for (const auto& op : work.ops) {
        if (op.kind != OpKind::Kernel) continue;
        kernel_seen = true;
        if (op.device != device) {
            ok &= suite::expect(false, share_name(d) + "'s kernel runs on " + device_name(device), device_name(device),
                                  device_name(op.device) + ": its stream and the current device at the launch belonged "
                                                           "to that device",
                                  launch_of(result, op));
            break;
        }
    }
    // Any stream of the share's device will do, the default stream included: the results criterion
    // says whether the kernel ran between the copies.
    ok &= suite::expect(kernel_seen, share_name(d) + "'s kernel works on the device buffer its input was copied to",
                          "a kernel launched on that buffer", "no kernel touched it", work.copy_in);
    ok &= suite::expect(work.copy_in->device == device,
                          share_name(d) + "'s input copy is queued with " + device_name(device) +
                              " current (cudaSetDevice before every copy and launch)",
                          device_name(device) + " current", device_name(work.copy_in->device) + " current", work.copy_in);
    // A share never copied back is a wrong result, which the results criterion explains.
    if (work.copy_out != nullptr)
        ok &= suite::expect(work.copy_out->device == device,
                              share_name(d) + "'s output copy is queued with " + device_name(device) + " current",
                              device_name(device) + " current", device_name(work.copy_out->device) + " current",
                              work.copy_out);
    return ok;
}

#ifndef MGPU_CHECK_REAL_GPU
// The device whose work used a stream, an event or a device buffer, from the simulator's timeline
// (-1 when nothing of the call's shows it).
int device_of_stream(std::uint64_t stream) {
    for (const auto& op : mgpu::sim::trace().ops)
        if (op.stream == stream) return op.device;
    return -1;
}

int device_of_event(const Run& result, long long event) {
    for (const auto& call : result.window)
        if (call.name == "cudaEventRecord" && call.result == 0 && !call.args.empty() && call.args[0] == event)
            return device_of_stream(call.stream);
    return -1;
}

int device_of_buffer(long long address) {
    const auto at = static_cast<std::uintptr_t>(address);
    for (const auto& op : mgpu::sim::trace().ops)
        if (op.kind == OpKind::Kernel)
            for (const auto& range : op.touches)
                if (range.begin <= at && at < range.end) return op.device;
    return -1;
}
#endif

// Section 2.9: each device's buffer, events and stream are released with that device current, as
// they were made. (CUDA accepts another current device for these calls, so on real GPUs nothing
// fails; the rule is the one every other call of the share follows, and the trace shows it only on
// the simulator.)
void expect_released_on_own_device(const Run& result) {
#ifndef MGPU_CHECK_REAL_GPU
    for (const auto& call : result.window) {
        if (call.result != 0 || call.args.empty()) continue;
        int owner = -1;
        std::string what;
        if (call.name == "cudaStreamDestroy") owner = device_of_stream(call.stream), what = "stream";
        else if (call.name == "cudaEventDestroy") owner = device_of_event(result, call.args[0]), what = "event";
        else if (call.name == "cudaFree") owner = device_of_buffer(call.args[0]), what = "buffer";
        if (owner < 0 || call.device == owner) continue;
        suite::expect(false, call.name + " of " + device_name(owner) + "'s " + what + " is made with " +
                                   device_name(owner) + " current",
                        device_name(owner) + " current", device_name(call.device) + " current: cudaSetDevice(" +
                            std::to_string(owner) + ") before releasing that device's things",
                        &call, "2.9");
        return;
    }
#else
    (void)result;
#endif
}

void expect_each_share_on_its_device(const Run& result) {
    bool every_share = true;
    for (std::size_t d = 0; d < result.plan.size(); ++d)
        if (result.plan[d].count > 0 && !expect_share_on_its_device(result, d)) {
            every_share = false;
            break;
        }
    if (every_share) expect_released_on_own_device(result);
    suite::expect_current_device(result.caller, result.text());
}

// One host thread per share, no thread driving two. The caller's thread may be one of them: an
// OpenMP team's thread 0 is the calling thread (section 2.7), and it drives a share like the others.
void expect_a_thread_per_share(const Run& result) {
    if (suite::kOnRealGpu) return;   // CUPTI's trace does not say which host thread made a call
    std::set<int> threads;
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        const ShareWork& work = result.shares[d];
        if (result.plan[d].count == 0 || work.copy_in == nullptr) continue;
        if (!suite::expect(threads.insert(work.copy_in->host_thread).second,
                             share_name(d) + " is driven by a host thread of its own, which drives no other share",
                             "one thread per share (std::thread, or an OpenMP thread each)",
                             work.copy_in->host_thread == result.caller_thread
                                 ? "the calling thread, which also drives another share"
                                 : "a thread that also drives another share",
                             work.copy_in, "2.7"))
            return;
    }
}

}  // namespace

TEST_CASE("device discipline: scale_on_devices on hgx-h200-8 queues each share with its own device current") {
    if (!suite::start({"hgx-h200-8"}, "even plan of 1048581 floats, called with device 5 current")) return;
    Run result;
    run(result, Driver::OneThread, even_plan(1048581, 8), 201, 5);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: scale_on_devices on mixed-3 with a weighted plan, called from device 2") {
    if (!suite::start({"mixed-3", "lazy"}, "plan of 500009 floats weighted by memory bandwidth")) return;
    Run result;
    run(result, Driver::OneThread, weighted_plan(500009, bandwidth_weights()), 202, 2);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: scale_on_devices over 3 of islands-2x2's 4 devices, called from device 3") {
    if (!suite::start({"islands-2x2", "shuffle:13"}, "even plan of 90001 floats over devices 0 to 2")) return;
    Run result;
    run(result, Driver::OneThread, even_plan(90001, 3), 203, 3);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: scale_on_devices on one GPU keeps everything on device 0") {
    if (!suite::start({"h200"}, "one share of 70001 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan(70001, 1), 204, 0);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: scale_with_threads on pcie-4 drives each device from a host thread of its own") {
    if (!suite::start({"pcie-4"}, "even plan of 400003 floats, called with device 1 current")) return;
    Run result;
    run(result, Driver::Threads, even_plan(400003, 4), 205, 1);
    expect_a_thread_per_share(result);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: scale_with_threads on hgx-h200-8 under a shuffled schedule, called from device 7") {
    if (!suite::start({"hgx-h200-8", "shuffle:41"}, "even plan of 262147 floats")) return;
    Run result;
    run(result, Driver::Threads, even_plan(262147, 8), 206, 7);
    expect_a_thread_per_share(result);
    expect_each_share_on_its_device(result);
}

TEST_CASE("device discipline: after a failed allocation, scale_on_devices still gives the caller's device back") {
    if (!suite::start({"pcie-4"}, "even plan of 40000 floats; the third cudaMalloc fails; called from device 1")) return;
    if (!inject_malloc_failure(3)) return;
    const std::vector<Share> plan = even_plan(40000, 4);
    std::vector<float> in(40000, 1.0f), out(40000, 0.0f);
    cudaSetDevice(1);
    suite::StudentCalls calls;
    const std::string what = "scale_on_devices when the third cudaMalloc fails";
    const cudaError_t status = calls.watch(what, [&] { return scale_on_devices(out.data(), in.data(), 2.0f, plan, nullptr); });
    suite::require_status(status, cudaErrorMemoryAllocation, what, calls);
    suite::expect_current_device(1, what);
}

TEST_CASE("device discipline: a plan with more shares than devices is refused with the caller's device current") {
    if (!suite::start({"pcie-4"}, "5 shares of 50000 floats on 4 devices; called from device 2")) return;
    for (Driver driver : {Driver::OneThread, Driver::Threads}) {
        Run result;
        run_refused(result, driver, 913, 2);
        suite::expect_current_device(2, result.text() + ", refused");
    }
}
