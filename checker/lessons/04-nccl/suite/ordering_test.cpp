// Criterion "stream ordering and overlap" (lesson section 4.5): train_step queues each rank's gradient
// kernel before the all-reduce that reads it, so that the all-reduce never starts before the kernel
// ends; the activations run on the side stream while the all-reduce does; the host waits for nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"

namespace {

using namespace lesson4;
using mgpu::trace::DeviceOp;
using mgpu::trace::OpKind;

// What one case holds train_step to. The caller's device is a case of its own, so that forgetting to
// give it back costs that case, not every case of the criterion.
enum class StepCheck { Ordering, CallerDevice };

void check_step(const std::vector<Rank>& ranks, std::size_t gradient_count, std::size_t activation_count, int step,
                int caller, StepCheck check) {
    const bool check_timeline = check == StepCheck::Ordering;
    const std::size_t n = ranks.size();
    PerRank<float> gradients(ranks, gradient_count);
    PerRank<float> activations(ranks, activation_count);
    std::vector<Replica> replicas(n);
    for (std::size_t r = 0; r < n; ++r) {
        gradients.upload(r, std::vector<float>(gradient_count, -3.0f));
        activations.upload(r, std::vector<float>(activation_count, 4.0f));
        cudaSetDevice(ranks[r].device);
        cudaStreamCreateWithFlags(&replicas[r].side_stream, cudaStreamNonBlocking);
        replicas[r].gradients = gradients.pointers()[r];
        replicas[r].gradient_count = gradient_count;
        replicas[r].activations = activations.pointers()[r];
        replicas[r].activation_count = activation_count;
    }
    drain(ranks);
    cudaSetDevice(caller);
    suite::StudentCalls calls;
    const std::string what = "train_step over " + suite::counted(n, "rank") + ", " + std::to_string(gradient_count) +
                             " gradients, " + suite::counted(activation_count, "activation");
    const ncclResult_t result = calls.watch(what, [&] { return train_step(ranks, replicas, step); });
    if (check == StepCheck::CallerDevice) suite::expect_current_device(caller, what);
    drain(ranks);
    require_result(result, ncclSuccess, what, calls);

    // The host waits for nothing: a wait in train_step holds every later launch back.
    for (const char* wait : {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
                             "cudaStreamQuery"}) {
        const auto waits = calls.calls_named(wait);
        if (!suite::expect(waits.empty(), what + ": train_step queues the step and waits for nothing",
                             "no " + std::string(wait), waits.empty() ? "" : waits.front().text + ": the host stops "
                             "there until the GPU is done, and nothing launched after it can overlap",
                             waits.empty() ? nullptr : &waits.front())) {
            suite::attach_timeline(calls, what);
            return;
        }
    }
    const std::vector<DeviceOp> ops = calls.ops();
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();
    for (std::size_t r = 0; r < n && check_timeline; ++r) {
        const DeviceOp* producer = nullptr;
        const DeviceOp* reduce = nullptr;
        const DeviceOp* side = nullptr;
        for (const DeviceOp& op : ops) {
            if (op.device != ranks[r].device) continue;
            if (op.kind == OpKind::Collective && reduce == nullptr) reduce = &op;
            if (op.kind == OpKind::Kernel && op.name.find("produce_gradients") != std::string::npos) producer = &op;
            if (op.kind == OpKind::Kernel && op.name.find("advance_activations") != std::string::npos) side = &op;
        }
        const std::string rank = "rank " + std::to_string(r) + " (device " + std::to_string(ranks[r].device) + ")";
        if (!suite::expect(producer != nullptr && reduce != nullptr && side != nullptr,
                             what + ": " + rank + " runs produce_gradients, an all-reduce and advance_activations",
                             "all three on the rank's device",
                             std::string(producer ? "" : "no produce_gradients kernel; ") +
                                 (reduce ? "" : "no all-reduce; ") + (side ? "" : "no advance_activations kernel"))) {
            suite::attach_timeline(calls, what);
            return;
        }
        if (!suite::expect(reduce->start_us >= producer->end_us,
                             what + ": " + rank + "'s all-reduce starts after the kernel that writes its gradients",
                             "the all-reduce to start at or after " + std::to_string(producer->end_us) + " us",
                             "it started at " + std::to_string(reduce->start_us) +
                                 " us, while produce_gradients was still running: queue the kernel on ranks[i].stream, "
                                 "the all-reduce's stream (or make that stream wait for an event recorded after it)")) {
            suite::attach_timeline(calls, what);
            return;
        }
        // On one stream the one queued first holds the other back; say which waited for which.
        const mgpu::trace::ApiCall* side_launch = nullptr;
        for (const auto& call : made)
            if (call.seq == side->api_seq) side_launch = &call;
        const bool side_first = side->api_seq < reduce->api_seq;
        if (!suite::expect(side->stream != reduce->stream,
                             what + ": " + rank + "'s activations run on the side stream",
                             "advance_activations on replicas[i].side_stream",
                             side_first ? "it was launched on ranks[i].stream, the all-reduce's stream, before the "
                                          "all-reduce, so the all-reduce waited for it: launch it on "
                                          "replicas[i].side_stream"
                                        : "it was launched on ranks[i].stream, the all-reduce's stream, after the "
                                          "all-reduce, so it waited for the all-reduce: launch it on "
                                          "replicas[i].side_stream",
                             side_launch, "4.5")) {
            suite::attach_timeline(calls, what);
            return;
        }
        // Launched while the all-reduce was still to run, it must not have waited for it. (Launched
        // later, the host was simply slower than the GPU: nothing to judge.)
        const double launched_at = side_launch != nullptr ? side_launch->begin_us : side->start_us;
        if (!suite::expect(launched_at >= reduce->end_us || side->start_us < reduce->end_us,
                             what + ": " + rank + "'s activations run while its gradients are averaged",
                             "advance_activations overlapping the all-reduce on the timeline",
                             "advance_activations ran " + std::to_string(side->start_us) + "-" +
                                 std::to_string(side->end_us) + " us, after the all-reduce (" +
                                 std::to_string(reduce->start_us) + "-" + std::to_string(reduce->end_us) +
                                 " us): nothing may order it after the all-reduce")) {
            suite::attach_timeline(calls, what);
            return;
        }
    }
    // The values: the average of every rank's gradients, and the activations advanced once.
    for (std::size_t r = 0; r < n && check_timeline; ++r) {
        const std::vector<float> out = gradients.download(r);
        for (std::size_t i = 0; i < gradient_count; ++i) {
            const double want = 0.5 * (static_cast<double>(i % 61) + step + 3.5 * static_cast<double>(n - 1));
            if (!(std::fabs(out[i] - want) <= 1e-5 * (1 + std::fabs(want)) * static_cast<double>(n))) {
                suite::expect_value(false, what + ": the gradients are averaged after they are produced",
                                      "rank " + std::to_string(r) + " gradient [" + std::to_string(i) + "] = " +
                                          std::to_string(want),
                                      std::to_string(out[i]) + (out[i] == -3.0f ? " (never written)" : ""));
                return;
            }
        }
        const std::vector<float> advanced = activations.download(r);
        for (std::size_t i = 0; i < activation_count; ++i)
            if (advanced[i] != 3.0f) {
                suite::expect_value(false, what + ": the activations are advanced once",
                                      "rank " + std::to_string(r) + " activation [" + std::to_string(i) + "] = 3 "
                                      "(0.5 * 4 + 1)", std::to_string(advanced[i]));
                return;
            }
    }
    for (std::size_t r = 0; r < n; ++r) {
        cudaSetDevice(ranks[r].device);
        cudaStreamDestroy(replicas[r].side_stream);
    }
    cudaSetDevice(0);
}

}  // namespace

TEST_CASE("stream ordering and overlap: hgx-h200-8, every rank") {
    if (!start({"hgx-h200-8"}, "8 ranks, 2^17 gradients and 2^18 activations each, device 5 current")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_step(ranks, std::size_t{1} << 17, std::size_t{1} << 18, 3, 5, StepCheck::Ordering);
    close_suite_ranks(ranks);
}

TEST_CASE("stream ordering and overlap: pcie-4 under a lazy schedule") {
    if (!start({"pcie-4", "lazy"}, "4 ranks, 2^17 + 3 gradients and 2^18 activations each")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_step(ranks, (std::size_t{1} << 17) + 3, std::size_t{1} << 18, 8, 2, StepCheck::Ordering);
    close_suite_ranks(ranks);
}

TEST_CASE("stream ordering and overlap: two ranks of islands-2x2 under a shuffled schedule") {
    if (!start({"islands-2x2", "shuffle:13"}, "ranks on devices 2 and 3, 100003 gradients, 2^18 activations")) return;
    std::vector<Rank> ranks = suite_ranks({2, 3});
    check_step(ranks, 100003, std::size_t{1} << 18, 1, 0, StepCheck::Ordering);
    close_suite_ranks(ranks);
}

TEST_CASE("stream ordering and overlap: train_step on mixed-3 gives the caller's device back") {
    if (!start({"mixed-3"}, "3 ranks, 4099 gradients and 8191 activations each, device 1 current")) return;
    std::vector<Rank> ranks = suite_ranks();
    check_step(ranks, 4099, 8191, 2, 1, StepCheck::CallerDevice);
    close_suite_ranks(ranks);
}
