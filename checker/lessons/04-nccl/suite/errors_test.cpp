// Criterion "error handling" (lesson section 4.7): wait_for_ranks waits by polling the streams and
// the communicators' asynchronous errors; when an NCCL operation fails on the GPU (it then never
// finishes) it aborts every communicator and returns the error. A wait that blocks on a stream
// behind the failed operation would hang on GPUs: the simulator stops it and the case fails with why.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"

namespace {

using namespace lesson4;

// `busy_rank` >= 0 gets 32 more memsets behind its all-reduce: its stream ends long after the others,
// so a wait that looks only at the first or the last rank's stream returns too early.
void check_clean_wait(const std::string& topology, const std::string& schedule, int busy_rank = -1) {
    std::vector<Rank> ranks = suite_ranks();
    PerRank<float> buffers(ranks, std::size_t{1} << 20);
    queue_reduce_then_memset(ranks, buffers.pointers(), buffers.count());
    std::string extra;
    if (busy_rank >= 0) {
        const Rank& busy = ranks[static_cast<std::size_t>(busy_rank)];
        cudaSetDevice(busy.device);
        for (int i = 0; i < 32; ++i)
            cudaMemsetAsync(buffers.pointers()[static_cast<std::size_t>(busy_rank)], i, buffers.count() * sizeof(float),
                            busy.stream);
        cudaSetDevice(0);
        extra = ", rank " + std::to_string(busy_rank) + "'s stream busy the longest";
    }
    suite::StudentCalls calls;
    const std::string what =
        "wait_for_ranks after an all-reduce of 4 MiB per rank (" + topology + ", " + schedule + extra + ")";
    const ncclResult_t result = calls.watch(what, [&] { return wait_for_ranks(ranks); });
    require_result(result, ncclSuccess, what, calls);
    bool all_there = true;
    for (const Rank& rank : ranks) all_there = all_there && rank.comm != nullptr;
    suite::expect(all_there, what + " keeps every communicator", "every comm as it was",
                    "a comm was set to nullptr although nothing failed");
#ifndef MGPU_CHECK_REAL_GPU
    const double returned_at = calls.returned_at_us();
    double last_end = 0;
    for (const auto& op : mgpu::sim::trace().ops) last_end = std::max(last_end, op.end_us);
    suite::expect(returned_at >= last_end, what + " returns only once every stream is idle",
                    "the return at or after " + std::to_string(last_end) + " us, when the last queued work ends",
                    "it returned at " + std::to_string(returned_at) +
                        " us: keep polling until cudaStreamQuery answers cudaSuccess for every rank's stream");
    suite::expect(mgpu::sim::aborted_nccl_comms() == 0, what + " aborts nothing when nothing failed", "no ncclCommAbort",
                    suite::counted(mgpu::sim::aborted_nccl_comms(), "communicator") + " aborted");
#endif
    close_suite_ranks(ranks);
}

void check_failed_wait(int failing, const std::string& what_failed) {
    std::vector<Rank> ranks = suite_ranks();
    PerRank<float> buffers(ranks, 65536);
    for (int i = 0; i < failing; ++i) queue_reduce_then_memset(ranks, buffers.pointers(), buffers.count());
    suite::StudentCalls calls;
    const std::string what = "wait_for_ranks when " + what_failed;
    const ncclResult_t result = calls.watch(what, [&] { return wait_for_ranks(ranks); });
    expect_result(result, ncclRemoteError, what, calls);
    std::string still_set;
    for (std::size_t r = 0; r < ranks.size(); ++r)
        if (ranks[r].comm != nullptr) still_set += (still_set.empty() ? "" : ", ") + std::to_string(r);
    suite::expect(still_set.empty(), what + " sets every comm to nullptr", "every comm nullptr after its abort",
                    "ranks " + still_set + " still hold their comm");
#ifndef MGPU_CHECK_REAL_GPU
    suite::expect(mgpu::sim::aborted_nccl_comms() == ranks.size() && mgpu::sim::live_nccl_comms() == 0,
                    what + " aborts every communicator", std::to_string(ranks.size()) + " aborted with ncclCommAbort",
                    std::to_string(mgpu::sim::aborted_nccl_comms()) + " aborted, " +
                        std::to_string(mgpu::sim::live_nccl_comms()) +
                        " still alive: a failed operation never ends until its communicator is aborted");
#endif
    for (Rank& rank : ranks) {
        if (rank.comm != nullptr) ncclCommAbort(rank.comm);
        rank.comm = nullptr;
    }
    close_suite_ranks(ranks);
}

}  // namespace

TEST_CASE("error handling: with nothing failing, wait_for_ranks returns once all work is done") {
    if (!start({"pcie-4", "lazy"}, "4 ranks, an all-reduce and a memset queued on each stream")) return;
    check_clean_wait("pcie-4", "lazy");
}

TEST_CASE("error handling: wait_for_ranks waits for every stream, not only the first or the last") {
    if (!start({"hgx-h200-8", "shuffle:9"}, "8 ranks, an all-reduce and a memset on each stream, 32 more memsets on rank 3's")) return;
    check_clean_wait("hgx-h200-8", "shuffled", 3);
}

TEST_CASE("error handling: one GPU, nothing failing") {
    if (!start({"h200"}, "1 rank, an all-reduce and a memset queued")) return;
    check_clean_wait("h200", "eager");
}

TEST_CASE("error handling: an all-reduce that fails on the GPU is reported and every communicator aborted") {
    if (!start({"islands-2x2"}, "4 ranks; the all-reduce fails on the GPU (a peer stops answering)", 1)) return;
    check_failed_wait(1, "the all-reduce fails on the GPU");
}

TEST_CASE("error handling: the second of two all-reduces fails on hgx-h200-8") {
    if (!start({"hgx-h200-8", "shuffle:4"}, "8 ranks; the second all-reduce fails on the GPU", 2)) return;
    check_failed_wait(2, "the second all-reduce fails on the GPU");
}
