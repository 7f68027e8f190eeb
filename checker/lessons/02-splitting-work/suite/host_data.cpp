#include "host_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "support/device_data.h"
#include "support/expectations.h"
#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"

namespace lesson2 {

namespace {

using mgpu::trace::OpKind;

void require_setup(cudaError_t status, const char* what) {
    if (status != cudaSuccess)
        throw std::runtime_error(std::string("the checker could not ") + what + ": " + suite::error_text(status));
}

// Page-locked floats the suite allocates and frees outside the student's window.
class PinnedFloats {
public:
    explicit PinnedFloats(std::size_t count) : count_(count + suite::kGuardElements) {
        void* p = nullptr;
        require_setup(cudaMallocHost(&p, count_ * sizeof(float)), "allocate page-locked host memory");
        data_ = static_cast<float*>(p);
    }
    ~PinnedFloats() { cudaFreeHost(data_); }
    PinnedFloats(const PinnedFloats&) = delete;
    PinnedFloats& operator=(const PinnedFloats&) = delete;
    float* data() const { return data_; }

private:
    std::size_t count_;
    float* data_ = nullptr;
};

bool is_host_device_copy(const mgpu::trace::ApiCall& call) {
    return call.name == "cudaMemcpyAsync" || call.name == "cudaMemcpy";
}

long long address(const void* p) { return static_cast<long long>(reinterpret_cast<std::uintptr_t>(p)); }

void take_counters(std::vector<std::size_t>& bytes, std::size_t& streams, std::size_t& events, std::size_t& pinned) {
    bytes.clear();
    for (int device = 0; device < suite::device_count(); ++device)
        bytes.push_back(mgpu::sim::device_bytes_in_use(device));
    streams = mgpu::sim::live_streams();
    events = mgpu::sim::live_events();
    pinned = mgpu::sim::live_page_locked_ranges();
}

int suite_host_thread() {
    int device = 0;
    cudaGetDevice(&device);   // a call of the suite's own, to learn how the trace numbers this thread
    const auto& calls = mgpu::sim::trace().calls;
    return calls.empty() ? 0 : calls.back().host_thread;
}

// The queue an operation went to. The legacy default stream (and cudaStreamPerThread) has the same
// trace id on every device, yet each device has its own: work queued on stream 0 with device 1
// current runs on device 1, in device 1's queue, as CUDA does it.
struct Queue {
    std::uint64_t stream = 0;
    int device = -1;
    bool operator==(const Queue&) const = default;
};

Queue queue_of(const mgpu::trace::DeviceOp& op) {
    const bool default_stream = op.stream == mgpu::trace::kLegacyStream || op.stream == mgpu::trace::kPerThreadStream;
    return Queue{op.stream, default_stream ? op.device : -1};
}

const mgpu::trace::DeviceOp* op_of(const std::vector<mgpu::trace::DeviceOp>& ops, const mgpu::trace::ApiCall* call) {
    if (call == nullptr) return nullptr;
    for (const auto& op : ops)
        if (op.api_seq == call->seq) return &op;
    return nullptr;
}

// A kernel that reads or writes the device memory at `address`.
bool touches(const mgpu::trace::DeviceOp& op, long long address) {
    const auto at = static_cast<std::uintptr_t>(address);
    for (const auto& range : op.touches)
        if (at >= range.begin && at < range.end) return true;
    return false;
}

// The first successful host-device copy of `kind` and `bytes` in the window, after `after`, that no
// share has claimed yet, preferring one that ran on `device`.
const mgpu::trace::ApiCall* staging_copy(const Run& result, const std::vector<mgpu::trace::DeviceOp>& ops, OpKind kind,
                                         std::size_t bytes, int device, std::uint64_t after,
                                         const std::set<std::uint64_t>& claimed) {
    const mgpu::trace::ApiCall* fallback = nullptr;
    for (const auto& call : result.window) {
        if (!is_host_device_copy(call) || call.result != 0 || call.seq <= after || claimed.count(call.seq) == 1) continue;
        const mgpu::trace::DeviceOp* op = op_of(ops, &call);
        if (op == nullptr || op->kind != kind || op->bytes != bytes) continue;
        if (op->device == device) return &call;
        if (fallback == nullptr) fallback = &call;
    }
    return fallback;
}

bool within(long long at, const float* first, std::size_t count) {
    return at >= address(first) && at < address(first + count);
}

// Finds each share's calls and operations in the window. Its copies are found by their host
// addresses, within [in + first, in + first + count) and the same range of out, so a share copied in
// pieces (on several streams of its device, say) is found whole; a function that stages a share
// through a host buffer of its own copies from and to that buffer instead, so a share left without
// a copy then takes the first unclaimed copy of its size and direction, one on its own device first.
// The share's kernels are those that work on a device buffer its input was copied to, on whatever
// stream they were launched (CUPTI's trace does not say which memory a kernel touched: there, a
// kernel on the queue of one of the share's copies).
void find_share_work(Run& result, const float* in, const float* out) {
    result.window = result.calls.calls();
    const auto ops = result.calls.ops();
    result.shares.assign(result.plan.size(), ShareWork{});
    std::vector<std::vector<const mgpu::trace::ApiCall*>> ins(result.plan.size()), outs(result.plan.size());
    std::set<std::uint64_t> claimed;
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        const Share& share = result.plan[d];
        if (share.count == 0) continue;
        for (const auto& call : result.window)
            if (is_host_device_copy(call) && call.result == 0 && call.args.size() >= 2 &&
                within(call.args[1], in + share.first, share.count)) {
                ins[d].push_back(&call);
                claimed.insert(call.seq);
            }
        if (!ins[d].empty()) result.shares[d].copy_in = ins[d].front();
    }
    const auto bytes_of = [&](std::size_t d) { return result.plan[d].count * sizeof(float); };
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        ShareWork& work = result.shares[d];
        if (result.plan[d].count == 0 || work.copy_in != nullptr) continue;
        work.copy_in = staging_copy(result, ops, OpKind::MemcpyHtoD, bytes_of(d), static_cast<int>(d), 0, claimed);
        if (work.copy_in == nullptr) continue;
        work.staged_in = true;
        ins[d].push_back(work.copy_in);
        claimed.insert(work.copy_in->seq);
    }
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        const Share& share = result.plan[d];
        ShareWork& work = result.shares[d];
        if (work.copy_in == nullptr) continue;
        const mgpu::trace::DeviceOp* in_op = op_of(ops, work.copy_in);
        if (in_op == nullptr) continue;
        // The copies back of this share, not of another one that wrote to the same place: they follow
        // its first input copy, from the same device.
        for (const auto& call : result.window)
            if (is_host_device_copy(call) && call.result == 0 && call.args.size() >= 2 && call.seq > work.copy_in->seq &&
                within(call.args[0], out + share.first, share.count)) {
                const mgpu::trace::DeviceOp* out_op = op_of(ops, &call);
                if (out_op != nullptr && out_op->device == in_op->device) outs[d].push_back(&call);
            }
        if (outs[d].empty()) {
            const mgpu::trace::ApiCall* staged =
                staging_copy(result, ops, OpKind::MemcpyDtoH, bytes_of(d), in_op->device, work.copy_in->seq, claimed);
            const mgpu::trace::DeviceOp* staged_op = op_of(ops, staged);
            if (staged_op != nullptr && staged_op->device == in_op->device) {
                outs[d].push_back(staged);
                work.staged_out = true;
            }
        }
        for (const auto* call : outs[d]) claimed.insert(call->seq);
        if (!outs[d].empty()) work.copy_out = outs[d].back();
        // The queues the share's copies went to, and the device buffers its input went to.
        std::vector<Queue> queues;
        std::vector<long long> buffers;
        for (const auto* call : ins[d]) {
            buffers.push_back(call->args[0]);
            if (const auto* op = op_of(ops, call)) queues.push_back(queue_of(*op));
        }
        for (const auto* call : outs[d])
            if (const auto* op = op_of(ops, call)) queues.push_back(queue_of(*op));
        for (const auto& op : ops) {
            if (op.kind == OpKind::EventRecord || op.kind == OpKind::StreamWait) continue;
            const bool on_share_queue = std::find(queues.begin(), queues.end(), queue_of(op)) != queues.end();
            bool share_kernel = false;
            if (op.kind == OpKind::Kernel && op.api_seq > work.copy_in->seq)
                for (long long buffer : buffers) share_kernel = share_kernel || touches(op, buffer);
            if (on_share_queue || share_kernel) work.ops.push_back(op);
        }
    }
}

}  // namespace

double ShareWork::start_us() const {
    double start = std::numeric_limits<double>::infinity();
    for (const auto& op : ops) start = std::min(start, op.start_us);
    return start;
}

double ShareWork::end_us() const {
    double end = 0;
    for (const auto& op : ops) end = std::max(end, op.end_us);
    return end;
}

std::vector<Share> even_plan(std::size_t n, int parts) {
    std::vector<Share> plan;
    std::size_t first = 0;
    for (int i = 0; i < parts; ++i) {
        const std::size_t count = n / static_cast<std::size_t>(parts) + (static_cast<std::size_t>(i) < n % parts ? 1 : 0);
        plan.push_back(Share{first, count});
        first += count;
    }
    return plan;
}

std::vector<Share> weighted_plan(std::size_t n, const std::vector<double>& weights) {
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<Share> plan;
    std::size_t first = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        // Rounded down, the last share taking the rest: a valid plan is all the suite needs here.
        std::size_t count = static_cast<std::size_t>(std::floor(static_cast<double>(n) * weights[i] / total));
        count = std::min(count, n - first);
        if (i + 1 == weights.size()) count = n - first;
        plan.push_back(Share{first, count});
        first += count;
    }
    return plan;
}

std::vector<double> bandwidth_weights() {
    std::vector<double> weights;
    for (const auto& device : mgpu::sim::machine().devices) weights.push_back(device.memory_bandwidth_gbps);
    return weights;
}

bool inject_malloc_failure(int nth) {
    mgpu::sim::Options options = mgpu::sim::options();
    options.faults.malloc_fails_at = nth;
    try {
        mgpu::sim::reset_machine(options);
    } catch (const mgpu::sim::ScenarioUnavailable& unavailable) {
        mgpu::check::skip(unavailable.what());
        return false;
    }
    return true;
}

std::size_t plan_total(const std::vector<Share>& plan) {
    std::size_t total = 0;
    for (const Share& share : plan) total += share.count;
    return total;
}

std::string plan_text(const std::vector<Share>& plan) {
    std::string text;
    for (const Share& share : plan) {
        if (!text.empty()) text += ' ';
        text += std::to_string(share.count) + "@" + std::to_string(share.first);
    }
    return "[" + text + "]";
}

std::string Run::text() const {
    const std::string shares = plan.size() <= 8 ? plan_text(plan) : suite::counted(plan.size(), "share");
    if (driver == Driver::Threads) return "scale_with_threads(out, in, factor, plan " + shares + ")";
    return "scale_on_devices(out, in, factor, plan " + shares + (with_times ? ", &device_ms)" : ", nullptr)");
}

namespace {

cudaError_t call_student(Run& result, float* out, const float* in) {
    const std::string what = result.text() + " with device " + std::to_string(result.caller) + " current";
    return result.calls.watch(what, [&] {
        if (result.driver == Driver::Threads) return scale_with_threads(out, in, result.factor, result.plan);
        return scale_on_devices(out, in, result.factor, result.plan, result.with_times ? &result.device_ms : nullptr);
    });
}

void prepare(Run& result, Driver driver, const std::vector<Share>& plan, int caller, bool with_times) {
    result.driver = driver;
    result.plan = plan;
    result.caller = caller;
    result.with_times = with_times;
    result.caller_thread = suite_host_thread();
}

}  // namespace

void run_any_status(Run& result, Driver driver, const std::vector<Share>& plan, std::uint64_t salt, int caller,
                    bool with_times) {
    prepare(result, driver, plan, caller, with_times);
    const std::size_t n = plan_total(plan);
    result.input = suite::random_floats(n, salt);
    result.factor = suite::random_factor(salt);
    PinnedFloats in(n), out(n);
    std::copy(result.input.begin(), result.input.end(), in.data());
    std::fill(out.data(), out.data() + n + suite::kGuardElements, suite::kGuardValue);
    require_setup(cudaSetDevice(caller), "select the caller's device");
    mgpu::sim::drain_all();
    take_counters(result.bytes_before, result.streams_before, result.events_before, result.pinned_before);
    result.status = call_student(result, out.data(), in.data());
    // The output as the caller finds it on return, before anything still queued runs: under a lazy
    // schedule work that nobody waited for has not happened yet.
    result.output.assign(out.data(), out.data() + n + suite::kGuardElements);
    mgpu::sim::drain_all();
    take_counters(result.bytes_after, result.streams_after, result.events_after, result.pinned_after);
    find_share_work(result, in.data(), out.data());
}

void run(Run& result, Driver driver, const std::vector<Share>& plan, std::uint64_t salt, int caller, bool with_times) {
    run_any_status(result, driver, plan, salt, caller, with_times);
    suite::require_status(result.status, cudaSuccess, result.text(), result.calls);
}

void run_refused(Run& result, Driver driver, std::uint64_t salt, int caller) {
    run_any_status(result, driver, even_plan(50000, suite::device_count() + 1), salt, caller);
    if (result.window.empty()) suite::require_status(result.status, cudaErrorInvalidValue, result.text(), result.calls);
}

void run_with_student_buffers(Run& result, const std::vector<Share>& plan, int caller) {
    prepare(result, Driver::OneThread, plan, caller, false);
    const std::size_t n = plan_total(plan);
    result.factor = 2.0f;
    suite::StudentCalls allocating;
    float* in = allocating.watch("allocate_host_buffer(" + std::to_string(n) + ")", [&] { return allocate_host_buffer(n); });
    float* out = allocating.watch("allocate_host_buffer(" + std::to_string(n) + ")", [&] { return allocate_host_buffer(n); });
    if (in == nullptr || out == nullptr)
        mgpu::check::fail_and_stop({"allocate_host_buffer(" + std::to_string(n) + ") gives a buffer (the rest of this check needs it)",
                                    "a pointer to " + suite::counted(n, "float"), "nullptr", "", 0, false, "2.6"});
    for (std::size_t i = 0; i < n; ++i) in[i] = 1.0f + static_cast<float>(i % 7);
    require_setup(cudaSetDevice(caller), "select the caller's device");
    result.status = call_student(result, out, in);
    mgpu::sim::drain_all();
    find_share_work(result, in, out);
    suite::StudentCalls freeing;
    freeing.watch("free_host_buffer", [&] {
        free_host_buffer(in);
        free_host_buffer(out);
    });
    suite::require_status(result.status, cudaSuccess, result.text(), result.calls);
}

bool expect_results(const Run& result) {
    const std::size_t n = plan_total(result.plan);
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!(result.output[i] == result.factor * result.input[i]) && wrong++ == 0) first_wrong = i;
    std::size_t guard_wrong = 0;
    for (std::size_t i = n; i < result.output.size(); ++i) guard_wrong += result.output[i] != suite::kGuardValue;
    if (wrong == 0 && guard_wrong == 0) return true;

    // Causes first, from the timeline.
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        const ShareWork& work = result.shares[d];
        const Share& share = result.plan[d];
        if (share.count == 0) continue;
        const std::string which = "share " + std::to_string(d) + " (" + std::to_string(share.count) + "@" +
                                  std::to_string(share.first) + ", device " + std::to_string(d) + ")";
        if (work.copy_out == nullptr) {
            suite::expect(false, "why the results are wrong: " + which + " is never copied back to out + first",
                            "a cudaMemcpyAsync to out + " + std::to_string(share.first) + " of " +
                                suite::counted(share.count * sizeof(float), "byte"),
                            "no host copy writes there", work.copy_in, "2.9");
            continue;
        }
        if (work.end_us() > result.calls.returned_at_us() + 1e-6) {
            suite::expect(false, "why the results are wrong: the function returned before device " + std::to_string(d) +
                                       " finished " + which,
                            "every device's work done before returning (cudaStreamSynchronize on each device's stream)",
                            "its last operation ends at " + std::to_string(work.end_us()) + " us; the function returned at " +
                                std::to_string(result.calls.returned_at_us()) + " us",
                            work.copy_out, "2.4");
        }
    }
    if (wrong > 0) {
        suite::expect_value(false, result.text() + ": out[i] == factor * in[i] for all " + suite::counted(n, "element"),
                              "out[" + std::to_string(first_wrong) + "] = " +
                                  std::to_string(result.factor * result.input[first_wrong]),
                              std::to_string(wrong) + " wrong, the first out[" + std::to_string(first_wrong) + "] = " +
                                  std::to_string(result.output[first_wrong]));
    }
    if (guard_wrong > 0) {
        suite::expect_value(false, result.text() + ": nothing is written past the plan's last element",
                              "out[" + std::to_string(n) + "...] untouched",
                              suite::counted(guard_wrong, "element") + " after the end changed");
    }
    return false;
}

}  // namespace lesson2
