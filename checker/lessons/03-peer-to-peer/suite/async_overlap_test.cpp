// Criterion "async overlap" (lesson section 3.10): pipelined_scale moves chunks with
// cudaMemcpyPeerAsync on a stream of its own while kernels on another stream scale the chunks
// that have arrived. Lazy and shuffled schedules turn a missing event wait into wrong results;
// the trace and the modelled timeline show where the pipeline stops overlapping.
#include <doctest/doctest.h>

#include <algorithm>
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
using mgpu::trace::OpKind;

std::string pipeline_text(int dst_device, int src_device, std::size_t n, std::size_t chunk) {
    return "pipelined_scale(dst on " + std::to_string(dst_device) + ", src on " + std::to_string(src_device) +
           ", n = " + std::to_string(n) + ", chunk = " + std::to_string(chunk) + ")";
}

std::vector<mgpu::trace::DeviceOp> in_issue_order(std::vector<mgpu::trace::DeviceOp> ops) {
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.api_seq < b.api_seq; });
    return ops;
}

const mgpu::trace::ApiCall* call_with_seq(const std::vector<mgpu::trace::ApiCall>& calls, std::uint64_t seq) {
    for (const auto& call : calls) {
        if (call.seq == seq) return &call;
    }
    return nullptr;
}

// Wrong results say that something is wrong, not why: the timeline usually does. A kernel that
// started before its chunk's copy ended read the chunk before it arrived; a kernel still running
// when the function returned was not waited for.
void explain_wrong_results(const StudentCalls& calls, const std::string& what) {
    const auto copies = in_issue_order(calls.ops_of(OpKind::MemcpyPeer));
    const auto kernels = in_issue_order(calls.ops_of(OpKind::Kernel));
    const auto api = calls.calls();
    for (std::size_t k = 0; k < std::min(copies.size(), kernels.size()); ++k) {
        if (kernels[k].start_us < copies[k].end_us - 1e-6) {
            expect(false,
                   "why the results are wrong: chunk " + std::to_string(k) +
                       "'s kernel read the chunk before its copy arrived",
                   "the kernel starts after its chunk's copy ends: cudaEventRecord after the copy on the copy "
                   "stream, cudaStreamWaitEvent on the kernel's stream before the launch",
                   "copy of chunk " + std::to_string(k) + " ends at " + std::to_string(copies[k].end_us) +
                       " us; its kernel starts at " + std::to_string(kernels[k].start_us) + " us",
                   call_with_seq(api, kernels[k].api_seq), "3.10");
            attach_timeline(calls, what);
            return;
        }
    }
    for (const auto& kernel : kernels) {
        if (kernel.end_us > calls.returned_at_us() + 1e-6) {
            expect(false, "why the results are wrong: pipelined_scale returned before its last kernel finished",
                   "every kernel done before the function returns (cudaStreamSynchronize on the compute stream)",
                   "a kernel ends at " + std::to_string(kernel.end_us) + " us; the function returned at " +
                       std::to_string(calls.returned_at_us()) + " us",
                   call_with_seq(api, kernel.api_seq), "3.10");
            attach_timeline(calls, what);
            return;
        }
    }
}

// Runs pipelined_scale on random inputs; the calls stay in `calls`. The results are graded only
// where `results_graded` (the cases about results): a case about streams or ordering must not
// fail, and seem to accuse the student of a call they never made, because the numbers are wrong.
void check_pipeline(int dst_device, int src_device, std::size_t n, std::size_t chunk, std::uint64_t salt,
                    StudentCalls& calls, bool results_graded = true) {
    const auto source = random_floats(n, salt);
    const float factor = random_factor(salt);
    DeviceFloats src(src_device, n), dst(dst_device, n);
    src.upload(source);
    dst.fill_with_guard_value();
    cudaSetDevice(src_device);
    const std::string what = pipeline_text(dst_device, src_device, n, chunk);
    const cudaError_t status = calls.watch(what,
        [&] { return pipelined_scale(dst.data(), dst_device, src.data(), src_device, n, chunk, factor); });
    require_status(status, cudaSuccess, what, calls);
    const auto result = dst.download();
    mgpu::sim::drain_all();   // so that every queued operation has its place on the timeline
    if (results_graded && !expect_scaled(result, source, factor, what)) explain_wrong_results(calls, what);
}

// A cudaDeviceSynchronize between the pipeline's first and last copy makes the host wait for the
// whole device, which ends the overlap the pipeline exists for.
bool expect_no_device_sync_inside(const StudentCalls& calls, const std::vector<mgpu::trace::ApiCall>& copies) {
    for (const auto& sync : calls.calls_named("cudaDeviceSynchronize")) {
        if (sync.seq > copies.front().seq && sync.seq < copies.back().seq) {
            return expect(false, "the host does not wait for the whole device inside the pipeline (it stops the overlap)",
                          "no cudaDeviceSynchronize between the first and the last cudaMemcpyPeerAsync",
                          "cudaDeviceSynchronize with device " + std::to_string(sync.device) + " current", &sync);
        }
    }
    return true;
}

bool is_default_stream(std::uint64_t stream) {
    return stream == mgpu::trace::kLegacyStream || stream == mgpu::trace::kPerThreadStream;
}

}  // namespace

TEST_CASE("async overlap: pipelined_scale gives factor * src on NVLink peers under a lazy schedule") {
    if (!start({"hgx-h200-8", "lazy"}, "1000003 floats from device 2 to 6 in chunks of 65536")) return;
    StudentCalls calls;
    check_pipeline(6, 2, 1000003, 65536, 21, calls);
}

TEST_CASE("async overlap: pipelined_scale across islands under a shuffled schedule") {
    if (!start({"islands-2x2", "shuffle:17"}, "200001 floats from device 3 to 1 in chunks of 30000")) return;
    StudentCalls calls;
    check_pipeline(1, 3, 200001, 30000, 22, calls);
}

TEST_CASE("async overlap: pipelined_scale without P2P under a shuffled schedule") {
    if (!start({"pcie-4", "shuffle:29"}, "123457 floats from device 0 to 2 in chunks of 10000")) return;
    StudentCalls calls;
    check_pipeline(2, 0, 123457, 10000, 23, calls);
}

TEST_CASE("async overlap: copies run on a stream of their own and kernels on another, never the default stream") {
    if (!start({"hgx-h200-8"}, "100000 floats from device 0 to 1 in chunks of 12500")) return;
    StudentCalls calls;
    check_pipeline(1, 0, 100000, 12500, 24, calls, false);
    const auto copies = calls.calls_named("cudaMemcpyPeerAsync");
    expect(copies.size() >= 2, "the 8 chunks are copied with cudaMemcpyPeerAsync", "8 cudaMemcpyPeerAsync calls",
           suite::counted(copies.size(), "call"));
    for (const auto& copy : copies) {
        if (!expect(!is_default_stream(copy.stream), "cudaMemcpyPeerAsync goes on a stream the pipeline created",
                    "a stream made with cudaStreamCreateWithFlags", "the default stream (stream 0)", &copy)) {
            break;
        }
        if (!expect(copy.stream == copies.front().stream, "every chunk is copied on the same copy stream",
                    "stream " + std::to_string(copies.front().stream), "stream " + std::to_string(copy.stream), &copy)) {
            break;
        }
    }
    for (const auto& kernel : calls.ops_of(OpKind::Kernel)) {
        const bool own_stream = !is_default_stream(kernel.stream) && (copies.empty() || kernel.stream != copies.front().stream);
        if (!expect(own_stream, "the kernels run on a compute stream of their own, not the default or the copy stream",
                    "a second stream of the pipeline",
                    is_default_stream(kernel.stream) ? "the default stream" : "the copy stream")) {
            break;
        }
    }
}

TEST_CASE("async overlap: no cudaDeviceSynchronize between the first and the last copy") {
    if (!start({"hgx-h200-8", "shuffle:37"}, "100000 floats from device 4 to 7 in chunks of 10000")) return;
    StudentCalls calls;
    check_pipeline(7, 4, 100000, 10000, 25, calls, false);
    const auto copies = calls.calls_named("cudaMemcpyPeerAsync");
    if (!expect(!copies.empty(), "the chunks are copied with cudaMemcpyPeerAsync", "10 calls", "none")) return;
    if (!expect_no_device_sync_inside(calls, copies)) attach_timeline(calls, "pipelined_scale (device 4 to 7)");
}

TEST_CASE("async overlap: copies and kernels overlap in time") {
    if (!start({"hgx-h200-8"}, "2097152 floats from device 3 to 5 in chunks of 262144")) return;
    StudentCalls calls;
    check_pipeline(5, 3, std::size_t{1} << 21, std::size_t{1} << 18, 26, calls, false);
    const auto copies = calls.ops_of(OpKind::MemcpyPeer);
    const auto kernels = calls.ops_of(OpKind::Kernel);
    bool overlap = false;
    for (const auto& copy : copies) {
        for (const auto& kernel : kernels) overlap = overlap || mgpu::trace::overlaps(copy, kernel);
    }
    if (!expect(overlap, "on the modelled timeline a chunk's copy runs while an earlier chunk's kernel computes",
                "copy and kernel intervals that overlap",
                suite::counted(copies.size(), "copy", "copies") + " and " + std::to_string(kernels.size()) +
                    " kernels, none running at the same time"))
        attach_timeline(calls, "pipelined_scale (device 3 to 5)");
}

TEST_CASE("async overlap: each chunk's kernel starts after its copy has arrived") {
    const std::size_t chunk = 65536, n = 6 * chunk + 5;
    if (!start({"hgx-h200-8", "shuffle:31"}, "393221 floats from device 6 to 0 in chunks of 65536")) return;
    StudentCalls calls;
    check_pipeline(0, 6, n, chunk, 27, calls, false);
    const auto copies = in_issue_order(calls.ops_of(OpKind::MemcpyPeer));
    const auto kernels = in_issue_order(calls.ops_of(OpKind::Kernel));
    if (!expect(copies.size() == 7 && kernels.size() == 7, "one copy and one kernel per chunk", "7 copies, 7 kernels",
                suite::counted(copies.size(), "copy", "copies") + ", " + suite::counted(kernels.size(), "kernel"))) {
        return;
    }
    for (std::size_t k = 0; k < copies.size(); ++k) {
        if (!expect(kernels[k].start_us >= copies[k].end_us - 1e-6,
                    "chunk " + std::to_string(k) + "'s kernel waits for its copy (cudaStreamWaitEvent on its event)",
                    "kernel starts at or after " + std::to_string(copies[k].end_us) + " us",
                    "kernel starts at " + std::to_string(kernels[k].start_us) + " us")) {
            attach_timeline(calls, "pipelined_scale (device 6 to 0)");
            break;
        }
    }
}

TEST_CASE("async overlap: pipelined_scale of 2^24 floats") {
    if (!start({"hgx-h200-8"}, "16777216 floats from device 5 to 0 in chunks of 2097152")) return;
    StudentCalls calls;
    check_pipeline(0, 5, std::size_t{1} << 24, std::size_t{1} << 21, 28, calls);
}

TEST_CASE("async overlap: pipelined_scale with n = 0, n = 1 under a large chunk, and chunk = 0") {
    if (!start({"h200", "lazy"}, "0, 1 and 10 floats on device 0")) return;
    StudentCalls empty;
    const cudaError_t nothing = empty.watch("pipelined_scale with n = 0", [] { return pipelined_scale(nullptr, 0, nullptr, 0, 0, 16, 2.0f); });
    expect_status(nothing, cudaSuccess, "pipelined_scale with n = 0", empty);
    StudentCalls one;
    check_pipeline(0, 0, 1, 1000, 29, one);
    DeviceFloats src(0, 10), dst(0, 10);
    src.upload(random_floats(10, 30));
    StudentCalls refused;
    const cudaError_t status =
        refused.watch("pipelined_scale with chunk = 0",
                      [&] { return pipelined_scale(dst.data(), 0, src.data(), 0, 10, 0, 2.0f); });
    expect_status(status, cudaErrorInvalidValue, "pipelined_scale with chunk = 0", refused);
}

// One GPU is all some machines have (and all a one-GPU real machine can host): the pipeline's
// streams, read from the device operations (kind and stream), which both backends record.
TEST_CASE("async overlap: on one device, chunks are copied on one stream of the pipeline and scaled on another") {
    if (!start({"h200"}, "200003 floats on device 0 in chunks of 25000")) return;
    StudentCalls calls;
    check_pipeline(0, 0, 200003, 25000, 26, calls, false);
    std::vector<mgpu::trace::DeviceOp> copies;
    for (const auto& op : calls.ops()) {
        if (op.kind == OpKind::MemcpyPeer || op.kind == OpKind::MemcpyDtoD) copies.push_back(op);
    }
    const auto kernels = calls.ops_of(OpKind::Kernel);
    if (!expect(copies.size() >= 2 && kernels.size() >= 2, "the 9 chunks are each copied, then scaled by a kernel",
                "9 copies and 9 kernels", suite::counted(copies.size(), "copy", "copies") + " and " +
                                              suite::counted(kernels.size(), "kernel"))) {
        return;
    }
    for (const auto& copy : copies) {
        if (!expect(!is_default_stream(copy.stream) && copy.stream == copies.front().stream,
                    "every chunk is copied on the same stream, one the pipeline created",
                    "one stream made with cudaStreamCreateWithFlags",
                    is_default_stream(copy.stream) ? "a copy on the default stream (stream 0)" : "copies on two streams")) {
            return;
        }
    }
    for (const auto& kernel : kernels) {
        if (!expect(!is_default_stream(kernel.stream) && kernel.stream != copies.front().stream,
                    "the kernels run on a compute stream of their own, not the default or the copy stream",
                    "a second stream of the pipeline",
                    is_default_stream(kernel.stream) ? "the default stream" : "the copy stream")) {
            return;
        }
    }
}

// The ordering rules of the pipeline, read from the API calls, which both backends record: this
// is how a one-GPU real machine sees a missing cudaStreamWaitEvent or a device-wide wait, where
// no lazy or shuffled schedule can expose them.
TEST_CASE("async overlap: on one device, every kernel waits for its chunk's event and the device is never synchronised inside") {
    if (!start({"h200"}, "100003 floats on device 0 in chunks of 20000")) return;
    StudentCalls calls;
    check_pipeline(0, 0, 100003, 20000, 33, calls, false);
    const auto copies = calls.calls_named("cudaMemcpyPeerAsync");
    const auto launches = calls.calls_named("cudaLaunchKernel");
    if (!expect(!copies.empty() && !launches.empty(),
                "the 6 chunks are copied with cudaMemcpyPeerAsync and scaled by kernels", "6 copies and 6 launches",
                suite::counted(copies.size(), "copy", "copies") + " and " + suite::counted(launches.size(), "launch", "launches"))) {
        return;
    }
    if (!expect_no_device_sync_inside(calls, copies)) return attach_timeline(calls, "pipelined_scale on device 0");
    const auto records = calls.calls_named("cudaEventRecord");
    const auto waits = calls.calls_named("cudaStreamWaitEvent");
    std::uint64_t since = copies.front().seq;
    for (const auto& launch : launches) {
        bool waited = false;
        for (const auto& wait : waits) waited = waited || (wait.seq > since && wait.seq < launch.seq);
        if (!expect(waited, "each chunk's kernel is ordered after its copy: cudaStreamWaitEvent on the event recorded after it",
                    "a cudaStreamWaitEvent before every kernel launch",
                    "a kernel launched with no cudaStreamWaitEvent since the previous launch", &launch)) {
            return attach_timeline(calls, "pipelined_scale on device 0");
        }
        // The wait must order this kernel after the latest copy: an event recorded on that copy's stream
        // after it, then waited for by the kernel's stream. A wait on another stream, or for an event
        // recorded before the copy, orders nothing that matters.
        const mgpu::trace::ApiCall* copy = nullptr;
        for (const auto& c : copies)
            if (c.seq < launch.seq) copy = &c;
        bool ordered = false;
        for (const auto& record : records) {
            if (copy == nullptr || record.seq < copy->seq || record.seq > launch.seq || record.stream != copy->stream ||
                record.args.empty())
                continue;
            for (const auto& wait : waits)
                ordered = ordered || (wait.seq > record.seq && wait.seq < launch.seq && wait.stream == launch.stream &&
                                      wait.args.size() > 1 && wait.args[1] == record.args[0]);
        }
        if (!expect(ordered, "each kernel's stream waits for an event recorded on the copy stream after its chunk's copy",
                    "cudaEventRecord(event, copy stream) after the copy, then cudaStreamWaitEvent(kernel's stream, "
                    "event) before the launch",
                    "no such record and wait between the latest copy and this launch", &launch)) {
            return attach_timeline(calls, "pipelined_scale on device 0");
        }
        since = launch.seq;
    }
}
