// Criterion "communicator setup" (lesson section 4.2): open_ranks makes rank i on devices[i] from
// one host thread, each with a non-blocking stream of its own device, refuses impossible lists,
// leaves nothing behind when it fails and gives the caller's device back.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/expectations.h"
#include "job.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"

namespace {

using namespace lesson4;

std::string list_text(const std::vector<int>& devices) {
    std::string text;
    for (int device : devices) text += (text.empty() ? "" : ", ") + std::to_string(device);
    return "{" + text + "}";
}

void check_open(const std::vector<int>& devices, int caller) {
    cudaSetDevice(caller);
    std::vector<Rank> ranks;
    suite::StudentCalls calls;
    const std::string what = "open_ranks(" + list_text(devices) + ")";
    const ncclResult_t result = calls.watch(what, [&] { return open_ranks(devices, ranks); });
    require_result(result, ncclSuccess, what, calls);
    if (!suite::expect(ranks.size() == devices.size(), what + " gives one rank per device",
                         suite::counted(devices.size(), "entry", "entries"), suite::counted(ranks.size(), "entry", "entries"))) {
        close_suite_ranks(ranks);
        return;
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::string entry = what + ": ranks[" + std::to_string(i) + "]";
        int rank = -1, device = -1, count = -1;
        const bool known = ranks[i].comm != nullptr && ncclCommUserRank(ranks[i].comm, &rank) == ncclSuccess &&
                           ncclCommCuDevice(ranks[i].comm, &device) == ncclSuccess &&
                           ncclCommCount(ranks[i].comm, &count) == ncclSuccess;
        if (!suite::expect(known, entry + " holds a communicator", "a communicator made by ncclCommInitRank",
                             ranks[i].comm == nullptr ? "nullptr" : "a handle NCCL does not accept"))
            continue;
        suite::expect(rank == static_cast<int>(i) && count == static_cast<int>(devices.size()),
                        entry + " is rank " + std::to_string(i) + " of " + std::to_string(devices.size()),
                        "rank " + std::to_string(i) + " of " + std::to_string(devices.size()),
                        "rank " + std::to_string(rank) + " of " + std::to_string(count) +
                            ": call ncclCommInitRank(&comm, nranks, id, i) for entry i");
        suite::expect(device == devices[i], entry + "'s communicator belongs to device " + std::to_string(devices[i]),
                        "device " + std::to_string(devices[i]),
                        "device " + std::to_string(device) +
                            ": a communicator belongs to the device current when ncclCommInitRank is called; "
                            "call cudaSetDevice(devices[i]) right before it");
        int stream_device = -1;
        unsigned int flags = 0;
        const bool stream_known = ranks[i].stream != nullptr &&
                                  cudaStreamGetDevice(ranks[i].stream, &stream_device) == cudaSuccess &&
                                  cudaStreamGetFlags(ranks[i].stream, &flags) == cudaSuccess;
        cudaGetLastError();
        if (!suite::expect(stream_known, entry + " holds a stream", "a stream made by cudaStreamCreateWithFlags",
                             ranks[i].stream == nullptr ? "nullptr" : "a handle CUDA does not accept"))
            continue;
        suite::expect(stream_device == devices[i], entry + "'s stream belongs to device " + std::to_string(devices[i]),
                        "device " + std::to_string(devices[i]),
                        "device " + std::to_string(stream_device) +
                            ": create the stream with the rank's device current");
        suite::expect((flags & cudaStreamNonBlocking) != 0, entry + "'s stream is non-blocking",
                        "cudaStreamNonBlocking",
                        "a blocking stream (cudaStreamCreate): work on the legacy default stream would serialise "
                        "with it; use cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)");
    }
    suite::expect_current_device(caller, what);
    close_suite_ranks(ranks);
}

}  // namespace

TEST_CASE("communicator setup: every GPU of hgx-h200-8, listed in reverse") {
    if (!start({"hgx-h200-8"}, "open_ranks({7, 6, ..., 0}) with device 3 current")) return;
    check_open({7, 6, 5, 4, 3, 2, 1, 0}, 3);
}

TEST_CASE("communicator setup: one GPU") {
    if (!start({"h200"}, "open_ranks({0})")) return;
    check_open({0}, 0);
}

TEST_CASE("communicator setup: two of four devices on pcie-4 under a lazy schedule") {
    if (!start({"pcie-4", "lazy"}, "open_ranks({2, 1}) with device 3 current")) return;
    check_open({2, 1}, 3);
}

TEST_CASE("communicator setup: three devices of islands-2x2 under a shuffled schedule") {
    if (!start({"islands-2x2", "shuffle:5"}, "open_ranks({0, 3, 1}) with device 2 current")) return;
    check_open({0, 3, 1}, 2);
}

TEST_CASE("communicator setup: an empty list, or a device that does not exist, is refused") {
    if (!start({"islands-2x2"}, "open_ranks({}) and open_ranks({0, 7}) on 4 devices")) return;
    for (const std::vector<int>& devices : {std::vector<int>{}, std::vector<int>{0, 7}}) {
        std::vector<Rank> ranks(1);   // not empty before: the function must leave it empty
        suite::StudentCalls calls;
        const std::string what = "open_ranks(" + list_text(devices) + ")";
        const ncclResult_t result = calls.watch(what, [&] { return open_ranks(devices, ranks); });
        // A device that does not exist: ncclInvalidArgument from a check against cudaGetDeviceCount, or
        // ncclUnhandledCudaError from the cudaSetDevice that fails on it (section 4.2's own snippet).
        if (devices.empty() || result != ncclUnhandledCudaError) expect_result(result, ncclInvalidArgument, what, calls);
        suite::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries",
                        suite::counted(ranks.size(), "entry", "entries"));
#ifndef MGPU_CHECK_REAL_GPU
        suite::expect(mgpu::sim::live_nccl_comms() == 0 && mgpu::sim::live_streams() == 0,
                        what + " leaves no communicator or stream behind", "none",
                        suite::counted(mgpu::sim::live_nccl_comms(), "communicator") + ", " +
                            suite::counted(mgpu::sim::live_streams(), "stream"));
#endif
    }
}

TEST_CASE("communicator setup: a device listed twice fails and leaves nothing behind") {
    if (!start({"pcie-4"}, "open_ranks({1, 1}): NCCL refuses two ranks on one GPU")) return;
    std::vector<Rank> ranks;
    suite::StudentCalls calls;
    const std::string what = "open_ranks({1, 1})";
    const ncclResult_t result = calls.watch(what, [&] { return open_ranks({1, 1}, ranks); });
    suite::expect(result != ncclSuccess, what + " reports NCCL's failure", "ncclInvalidUsage (5) or another error",
                    result_text(result) + ": return the result of ncclGroupEnd");
    suite::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries", suite::counted(ranks.size(), "entry", "entries"));
#ifndef MGPU_CHECK_REAL_GPU
    suite::expect(mgpu::sim::live_nccl_comms() == 0 && mgpu::sim::live_streams() == 0,
                    what + " leaves no communicator or stream behind", "every communicator made aborted",
                    suite::counted(mgpu::sim::live_nccl_comms(), "communicator") + " and " +
                        suite::counted(mgpu::sim::live_streams(), "stream") +
                        " left: after a failure call ncclCommAbort on each communicator made");
#endif
}

// A failure after the communicators exist: whatever open_ranks made before it (communicators, the
// first streams, entries of `ranks`) must go, as after any failure.
TEST_CASE("communicator setup: a stream that cannot be created leaves no communicator, stream or entry behind") {
    mgpu::sim::Faults faults;
    faults.stream_create_fails_at = 3;
    if (!start({"pcie-4"}, "open_ranks({0, 1, 2, 3}) with device 1 current; the third stream creation fails with "
                           "cudaErrorMemoryAllocation", faults))
        return;
    cudaSetDevice(1);
    std::vector<Rank> ranks;
    suite::StudentCalls calls;
    const std::string what = "open_ranks({0, 1, 2, 3}) when the third cudaStreamCreateWithFlags fails";
    const ncclResult_t result = calls.watch(what, [&] { return open_ranks({0, 1, 2, 3}, ranks); });
    // The student's line that met the failure, for every finding below.
    const std::vector<mgpu::trace::ApiCall> made = calls.calls();
    const mgpu::trace::ApiCall* failed = nullptr;
    for (const auto& call : made)
        if (call.name.rfind("cudaStreamCreate", 0) == 0 && call.result == cudaErrorMemoryAllocation) failed = &call;
    // A placeholder that returns at once has met no failure and shows nothing here.
    if (!suite::expect(failed != nullptr, what + " creates a stream per rank (the rest of this check needs it)",
                         "a third cudaStreamCreateWithFlags, which fails", "no stream creation failed",
                         nullptr, "4.2")) {
        close_suite_ranks(ranks);
        return;
    }
    suite::expect(result != ncclSuccess, what + " reports the failure", "ncclUnhandledCudaError (1) or another error",
                    result_text(result), failed);
    suite::expect(ranks.empty(), what + " leaves `ranks` empty", "no entries",
                    suite::counted(ranks.size(), "entry", "entries") + ": clear `ranks` on every failure path", failed);
#ifndef MGPU_CHECK_REAL_GPU
    suite::expect(mgpu::sim::live_nccl_comms() == 0 && mgpu::sim::live_streams() == 0,
                    what + " leaves no communicator or stream behind", "every communicator aborted, every stream destroyed",
                    suite::counted(mgpu::sim::live_nccl_comms(), "communicator") + " and " +
                        suite::counted(mgpu::sim::live_streams(), "stream") +
                        " left: on a failure after ncclGroupEnd, call ncclCommAbort on each communicator and "
                        "cudaStreamDestroy on each stream made so far",
                    failed);
#endif
    suite::expect_current_device(1, what);
    close_suite_ranks(ranks);
}

// Section 4.2: an id serves one communicator. A program that opens ranks twice (a second job, a
// restart after a failure) needs a fresh ncclGetUniqueId the second time.
TEST_CASE("communicator setup: open_ranks twice in one program, closing in between") {
    if (!start({"pcie-4"}, "open_ranks({0, 1, 2}), closed by the suite, then open_ranks({3, 1})")) return;
    check_open({0, 1, 2}, 0);
    check_open({3, 1}, 2);
}
