// Criterion "cleanup" (lesson section 4.8): close_ranks finishes each rank's queued work, finalizes
// and destroys its communicator, then destroys its stream; aborted ranks (comm nullptr) are skipped;
// nothing is left and the caller's device is current again.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "expectations.h"
#include "job.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"

namespace {

using namespace lesson4;

void check_close(std::vector<Rank> ranks, int caller, const std::string& what) {
    PerRank<float> buffers(ranks, std::size_t{1} << 20);
    queue_reduce_then_memset(ranks, buffers.pointers(), buffers.count());
    std::map<std::uint64_t, int> rank_of_stream;
    for (std::size_t r = 0; r < ranks.size(); ++r) rank_of_stream[stream_id(ranks[r].stream)] = static_cast<int>(r);
    const std::size_t expected_destroys = [&] {
        std::size_t count = 0;
        for (const Rank& rank : ranks) count += rank.comm != nullptr;
        return count;
    }();
    cudaSetDevice(caller);
    lesson3::StudentCalls calls;
    const ncclResult_t result = calls.watch(what, [&] { return close_ranks(ranks); });
    lesson3::expect_current_device(caller, what);
    expect_result(result, ncclSuccess, what, calls);
    lesson3::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries", std::to_string(ranks.size()) + " entries");
#ifndef MGPU_CHECK_REAL_GPU
    lesson3::expect(mgpu::sim::live_nccl_comms() == 0, what + " destroys every communicator",
                    "ncclCommDestroy for each rank with a comm",
                    std::to_string(mgpu::sim::live_nccl_comms()) + " communicator(s) still alive");
    lesson3::expect(mgpu::sim::live_streams() == 0, what + " destroys every rank's stream", "cudaStreamDestroy for each",
                    std::to_string(mgpu::sim::live_streams()) + " stream(s) still alive");
    // Each stream goes only once the work queued on it has finished.
    for (const auto& destroy : calls.successful("cudaStreamDestroy")) {
        double last_end = 0;
        for (const auto& op : mgpu::sim::trace().ops)
            if (op.stream == destroy.stream) last_end = std::max(last_end, op.end_us);
        const auto rank = rank_of_stream.find(destroy.stream);
        if (rank == rank_of_stream.end()) continue;
        if (!lesson3::expect(destroy.begin_us >= last_end,
                             what + ": rank " + std::to_string(rank->second) + "'s stream is destroyed after its work",
                             "cudaStreamDestroy at or after " + std::to_string(last_end) + " us, when its work ends",
                             "it was called at " + std::to_string(destroy.begin_us) +
                                 " us, with work still queued: cudaStreamSynchronize(stream) first",
                             &destroy))
            break;
    }
    // Finalize before destroy, for every communicator. (CUPTI sees no NCCL call, so on real GPUs
    // this is left to the simulator's cases, like the checks above.)
    const auto finalizes = calls.successful("ncclCommFinalize");
    const auto destroys = calls.successful("ncclCommDestroy");
    lesson3::expect(finalizes.size() >= expected_destroys, what + " finalizes each communicator before destroying it",
                    std::to_string(expected_destroys) + " ncclCommFinalize call(s), each before its ncclCommDestroy",
                    std::to_string(finalizes.size()) + " ncclCommFinalize call(s)",
                    destroys.empty() ? nullptr : &destroys.front());
#endif
}

}  // namespace

TEST_CASE("cleanup: close_ranks on pcie-4 with work still queued") {
    if (!start({"pcie-4", "lazy"}, "4 ranks, an all-reduce and a memset queued, device 2 current")) return;
    check_close(suite_ranks(), 2, "close_ranks of 4 ranks with work queued");
}

TEST_CASE("cleanup: close_ranks skips a rank whose communicator was aborted") {
    if (!start({"hgx-h200-8", "shuffle:2"}, "8 ranks; rank 3's communicator aborted (comm nullptr)")) return;
    std::vector<Rank> ranks = suite_ranks();
    ncclCommAbort(ranks[3].comm);
    ranks[3].comm = nullptr;
    check_close(ranks, 0, "close_ranks of 8 ranks, rank 3 aborted");
}

TEST_CASE("cleanup: close_ranks on one GPU") {
    if (!start({"h200"}, "1 rank")) return;
    check_close(suite_ranks(), 0, "close_ranks of 1 rank");
}
