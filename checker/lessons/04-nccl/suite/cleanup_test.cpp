// Criterion "cleanup" (lesson section 4.8): close_ranks finishes each rank's queued work, finalizes
// and destroys its communicator, then destroys its stream; aborted ranks (comm nullptr) are skipped;
// nothing is left and the caller's device is current again.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"

namespace {

using namespace lesson4;

// The rank an NCCL call names by its communicator: the simulator writes it "comm=comm#3 rank 1";
// -1 when the call names no known communicator.
int rank_named(const mgpu::trace::ApiCall& call) {
    const auto at = call.text.find("comm#");
    if (at == std::string::npos) return -1;
    const auto rank = call.text.find(" rank ", at);
    if (rank == std::string::npos) return -1;
    return std::atoi(call.text.c_str() + rank + 6);
}

// The order section 4.8 and the header's Task 7 give each rank: its queued work finished before its
// communicator is finalized, the communicator destroyed before its stream, and the stream destroyed
// with the rank's device current. `stream_end` holds when each rank's queued work ended.
void expect_rank_order(const suite::StudentCalls& calls, const std::vector<Rank>& ranks,
                       const std::vector<std::uint64_t>& stream_ids, const std::vector<double>& stream_end,
                       const std::string& what) {
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const std::string rank = "rank " + std::to_string(r);
        const mgpu::trace::ApiCall* first_nccl = nullptr;   // its finalize, or its destroy without one
        const mgpu::trace::ApiCall* comm_destroy = nullptr;
        const mgpu::trace::ApiCall* stream_destroy = nullptr;
        for (const auto& call : made) {
            if (call.result != 0) continue;
            if ((call.name == "ncclCommFinalize" || call.name == "ncclCommDestroy") && rank_named(call) == static_cast<int>(r)) {
                if (first_nccl == nullptr) first_nccl = &call;
                if (call.name == "ncclCommDestroy") comm_destroy = &call;
            }
            if (call.name == "cudaStreamDestroy" && call.stream == stream_ids[r]) stream_destroy = &call;
        }
        if (first_nccl != nullptr &&
            !suite::expect(first_nccl->begin_us >= stream_end[r],
                             what + ": " + rank + "'s queued work is finished before its communicator is finalized",
                             first_nccl->name + " at or after " + std::to_string(stream_end[r]) +
                                 " us, when the work on its stream ends",
                             "called at " + std::to_string(first_nccl->begin_us) +
                                 " us, with work still queued: cudaStreamSynchronize(stream) comes first",
                             first_nccl))
            return;
        if (comm_destroy != nullptr && stream_destroy != nullptr &&
            !suite::expect(stream_destroy->seq > comm_destroy->seq,
                             what + ": " + rank + "'s stream is destroyed after its communicator",
                             "ncclCommDestroy, then cudaStreamDestroy",
                             "cudaStreamDestroy came first: the stream goes last, after everything that used it",
                             stream_destroy))
            return;
        if (stream_destroy != nullptr &&
            !suite::expect(stream_destroy->device == ranks[r].device,
                             what + ": " + rank + "'s stream is destroyed with its device current",
                             "device " + std::to_string(ranks[r].device) + " current",
                             "device " + std::to_string(stream_destroy->device) +
                                 " current: call cudaSetDevice(rank.device) before releasing the rank",
                             stream_destroy))
            return;
    }
}

#ifndef MGPU_CHECK_REAL_GPU
// Each rank with a communicator: ncclCommFinalize, then ncclCommDestroy. Said per rank, with the
// call that is missing or out of place: a count of finalizes would read "0" for a finalize that
// came after its destroy and failed there.
void expect_finalized_before_destroyed(const suite::StudentCalls& calls, const std::vector<Rank>& ranks,
                                       const std::string& what) {
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        if (ranks[r].comm == nullptr) continue;
        const mgpu::trace::ApiCall* finalize = nullptr;
        const mgpu::trace::ApiCall* destroy = nullptr;
        for (const auto& call : made) {
            if (rank_named(call) != static_cast<int>(r)) continue;
            if (call.name == "ncclCommFinalize" && finalize == nullptr) finalize = &call;
            if (call.name == "ncclCommDestroy" && call.result == 0 && destroy == nullptr) destroy = &call;
        }
        const std::string rank = "rank " + std::to_string(r);
        const std::string check = what + " finalizes " + rank + "'s communicator, then destroys it";
        if (finalize == nullptr) {
            suite::expect(false, check, "ncclCommFinalize(comm), then ncclCommDestroy(comm)",
                            "no ncclCommFinalize for " + rank + (destroy ? ", only ncclCommDestroy" : "") +
                                ": finalize completes the communicator's work with the other ranks; destroy only "
                                "frees it",
                            destroy, "4.8");
            return;
        }
        if (destroy != nullptr && finalize->seq > destroy->seq) {
            suite::expect(false, check, "ncclCommFinalize(comm), then ncclCommDestroy(comm)",
                            "ncclCommFinalize came after ncclCommDestroy" +
                                (suite::where(*destroy).empty() ? std::string() : " (at " + suite::where(*destroy) + ")") +
                                " and failed with " + result_text(static_cast<ncclResult_t>(finalize->result)) +
                                ": a destroyed communicator is gone; finalize it first, then destroy it",
                            finalize, "4.8");
            return;
        }
        if (finalize->result != 0) {
            suite::expect(false, check, "ncclCommFinalize returns ncclSuccess",
                            finalize->text + " returned " + result_text(static_cast<ncclResult_t>(finalize->result)) +
                                (finalize->reason.empty() ? std::string() : ": \"" + finalize->reason + "\""),
                            finalize, "4.8");
            return;
        }
    }
}

#endif

void check_close(std::vector<Rank> ranks, int caller, const std::string& what) {
    PerRank<float> buffers(ranks, std::size_t{1} << 20);
    queue_reduce_then_memset(ranks, buffers.pointers(), buffers.count());
    std::map<std::uint64_t, int> rank_of_stream;
    for (std::size_t r = 0; r < ranks.size(); ++r) rank_of_stream[stream_id(ranks[r].stream)] = static_cast<int>(r);

    const std::vector<Rank> given = ranks;
    cudaSetDevice(caller);
    suite::StudentCalls calls;
    const ncclResult_t result = calls.watch(what, [&] { return close_ranks(ranks); });
#ifndef MGPU_CHECK_REAL_GPU
    // Finalize before destroy, for every communicator: first, since a call out of order is also
    // why close_ranks returns an error. (CUPTI sees no NCCL call, so on real GPUs this is left
    // to the simulator's cases, like the checks below.)
    expect_finalized_before_destroyed(calls, given, what);
#endif
    suite::expect_current_device(caller, what);
    expect_result(result, ncclSuccess, what, calls);
    suite::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries", suite::counted(ranks.size(), "entry", "entries"));
#ifndef MGPU_CHECK_REAL_GPU
    suite::expect(mgpu::sim::live_nccl_comms() == 0, what + " destroys every communicator",
                    "ncclCommDestroy for each rank with a comm",
                    suite::counted(mgpu::sim::live_nccl_comms(), "communicator") + " still alive");
    suite::expect(mgpu::sim::live_streams() == 0, what + " destroys every rank's stream", "cudaStreamDestroy for each",
                    suite::counted(mgpu::sim::live_streams(), "stream") + " still alive");
    // Each stream goes only once the work queued on it has finished.
    for (const auto& destroy : calls.successful("cudaStreamDestroy")) {
        double last_end = 0;
        for (const auto& op : mgpu::sim::trace().ops)
            if (op.stream == destroy.stream) last_end = std::max(last_end, op.end_us);
        const auto rank = rank_of_stream.find(destroy.stream);
        if (rank == rank_of_stream.end()) continue;
        if (!suite::expect(destroy.begin_us >= last_end,
                             what + ": rank " + std::to_string(rank->second) + "'s stream is destroyed after its work",
                             "cudaStreamDestroy at or after " + std::to_string(last_end) + " us, when its work ends",
                             "it was called at " + std::to_string(destroy.begin_us) +
                                 " us, with work still queued: cudaStreamSynchronize(stream) first",
                             &destroy))
            break;
    }
    // Where each rank's queued work ended on the modelled timeline: all of it is the suite's, and
    // close_ranks has let it finish by now.
    mgpu::sim::drain_all();
    std::vector<double> stream_end(given.size(), 0.0);
    std::vector<std::uint64_t> stream_ids(given.size(), 0);
    for (const auto& [id, rank] : rank_of_stream) stream_ids[static_cast<std::size_t>(rank)] = id;
    for (const auto& op : mgpu::sim::trace().ops) {
        const auto rank = rank_of_stream.find(op.stream);
        if (rank == rank_of_stream.end()) continue;
        double& end = stream_end[static_cast<std::size_t>(rank->second)];
        end = std::max(end, op.end_us);
    }
    expect_rank_order(calls, given, stream_ids, stream_end, what);
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

// One rank that cannot be closed cleanly (its device id names no device, so cudaSetDevice fails)
// must not keep the ranks after it alive: close_ranks carries on and returns that first failure.
TEST_CASE("cleanup: close_ranks carries on past a rank whose device cannot be made current") {
    if (!start({"pcie-4"}, "4 ranks; rank 1's entry names device 9, which does not exist")) return;
    std::vector<Rank> ranks = suite_ranks();
    ranks[1].device = 9;
    cudaSetDevice(3);
    suite::StudentCalls calls;
    const std::string what = "close_ranks of 4 ranks, rank 1 on device 9";
    const ncclResult_t result = calls.watch(what, [&] { return close_ranks(ranks); });
    cudaGetLastError();   // the suite's own checks below must not see the student's 101
    suite::expect(result != ncclSuccess, what + " returns the failure of rank 1",
                    "ncclUnhandledCudaError (1) or another error", result_text(result));
    suite::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries",
                    suite::counted(ranks.size(), "entry", "entries") + ": carry on with the other ranks, then clear `ranks`");
#ifndef MGPU_CHECK_REAL_GPU
    // Rank 1's own communicator and stream may stay: its device could not be made current.
    suite::expect(mgpu::sim::live_nccl_comms() <= 1 && mgpu::sim::live_streams() <= 1,
                    what + " still ends ranks 0, 2 and 3", "their communicators and streams destroyed",
                    suite::counted(mgpu::sim::live_nccl_comms(), "communicator") + " and " +
                        suite::counted(mgpu::sim::live_streams(), "stream") +
                        " alive: keep the first failure and go on with the next rank");
#endif
    suite::expect_current_device(3, what);
}
