// Programs that hang forever on real GPUs are stopped with a diagnosis that names the ranks,
// the call each one waits in and what the others called instead (lessons-1-2-4.md 3.10, 3.14
// L4.b, L4.e, L4.h). Each scenario runs in a forked child, so the stop ends only the child.
// Detection is by state: a lone waiting thread is a hang at once; with other threads, every one
// of them asleep and nothing moving. No case depends on how fast the machine is.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "child_process.h"
#include "nccl_test_support.h"

using namespace nccl_tests;

namespace {

// The child inherits what the parent had buffered for stdout; flushing first keeps it from
// being written twice.
memory_tests::ChildOutcome run_in_child(const std::function<void()>& body) {
    std::fflush(stdout);
    return memory_tests::run_in_child(body);
}

constexpr int kStoppedStatus = 3;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every rank's buffer of 64 floats on its own device.
std::vector<float*> buffers_on_devices(int n) {
    std::vector<float*> buffers(n, nullptr);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaMalloc(&buffers[r], 64 * sizeof(float));
    }
    cudaSetDevice(0);
    return buffers;
}

// Runs `rank_body(r)` on a host thread of its own for each of n ranks, device r current, and joins them.
void on_a_thread_per_rank(int n, const std::function<void(int)>& rank_body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            cudaSetDevice(r);
            rank_body(r);
        });
    for (auto& thread : threads) thread.join();
}

std::vector<ncclComm_t> all_comms(int n) {
    std::vector<ncclComm_t> comms(n);
    ncclCommInitAll(comms.data(), n, nullptr);
    return comms;
}

// Ranks 0 and 1 of `id` on devices 0 and 1, made from one thread in a group, then destroyed.
void make_and_destroy_two_ranks(const ncclUniqueId& id) {
    std::vector<ncclComm_t> comms(2);
    ncclGroupStart();
    for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        ncclCommInitRank(&comms[r], 2, id, r);
    }
    ncclGroupEnd();
    for (ncclComm_t comm : comms) ncclCommDestroy(comm);
}

}  // namespace

TEST_CASE("an InitRank loop from one thread without a group is stopped, naming the ranks that never joined") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        std::vector<ncclComm_t> comms(4);
        for (int r = 0; r < 4; ++r) {
            cudaSetDevice(r);
            ncclCommInitRank(&comms[r], 4, id, r);
        }
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "waits in ncclCommInitRank"));
    CHECK(contains(outcome.standard_error, "rank 0 (device 0) joined"));
    CHECK(contains(outcome.standard_error, "ranks 1, 2, 3 never called ncclCommInitRank"));
    CHECK(contains(outcome.standard_error, "ncclGroupStart"));
}

// Two ranks made with one id, destroyed, then made again with the same id: NCCL's root for that id
// is gone, so the second init waits for ever (or fails) on GPUs.
TEST_CASE("ranks that join a unique id whose communicator is already made are stopped, naming the fresh id it needs") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        for (int round = 0; round < 2; ++round) {
            make_and_destroy_two_ranks(id);
        }
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "joined a unique id that has already made a communicator"));
    CHECK(contains(outcome.standard_error, "fresh ncclGetUniqueId"));
}

TEST_CASE("a fresh unique id for each communicator is never stopped") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        for (int round = 0; round < 2; ++round) {
            ncclUniqueId id;
            ncclGetUniqueId(&id);
            make_and_destroy_two_ranks(id);
        }
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == 0);
}

TEST_CASE("collectives for several ranks from one thread without a group are stopped at the first call") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        auto comms = all_comms(2);
        auto buffers = buffers_on_devices(2);
        for (int r = 0; r < 2; ++r) ncclAllReduce(buffers[r], buffers[r], 64, ncclFloat32, ncclSum, comms[r], nullptr);
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "waits in ncclAllReduce"));
    CHECK(contains(outcome.standard_error, "rank 0 (device 0) posted collective #1 ncclAllReduce(count=64"));
    CHECK(contains(outcome.standard_error, "rank 1 (device 1) has not called collective #1"));
    CHECK(contains(outcome.standard_error, "ncclGroupStart"));
}

TEST_CASE("a rank whose thread never calls the collective is named while the others wait") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        auto comms = all_comms(3);
        auto buffers = buffers_on_devices(3);
        on_a_thread_per_rank(3, [&](int r) {
            ncclBroadcast(buffers[r], buffers[r], 64, ncclFloat32, 0, comms[r], nullptr);
            if (r == 2) return;   // forgets the all-reduce
            ncclAllReduce(buffers[r], buffers[r], 64, ncclFloat32, ncclSum, comms[r], nullptr);
            cudaStreamSynchronize(nullptr);
        });
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "rank 0 (device 0) posted collective #2 ncclAllReduce"));
    CHECK(contains(outcome.standard_error, "rank 1 (device 1) posted collective #2 ncclAllReduce"));
    CHECK(contains(outcome.standard_error, "rank 2 (device 2) has not called collective #2; its last NCCL call was "
                                           "ncclBroadcast"));
}

// A rank whose call failed takes no part in what follows: the others wait for it. The advice names
// that failure, with NCCL's reason, and not send/receive matching, which is not the cause.
TEST_CASE("a hang behind a rank whose NCCL call failed names that call and its reason, not matching advice") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        auto comms = all_comms(3);
        auto buffers = buffers_on_devices(3);
        on_a_thread_per_rank(3, [&](int r) {
            // Rank 2 gives a root that is no rank: its call is refused, and it goes no further.
            if (ncclBroadcast(buffers[r], buffers[r], 64, ncclFloat32, r == 2 ? 5 : 0, comms[r], nullptr) != ncclSuccess)
                return;
            cudaStreamSynchronize(nullptr);
        });
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "An NCCL call failed before this: ncclBroadcast("));
    CHECK(contains(outcome.standard_error, "returned ncclInvalidArgument (4): \"Invalid root 5, nranks 3\""));
    CHECK(contains(outcome.standard_error, "section 4.7"));
    CHECK_FALSE(contains(outcome.standard_error, "a send needs the matching receive"));
}

TEST_CASE("ranks that disagree on count, type, root or order are stopped with both calls shown") {
    struct Mismatch {
        const char* name;
        ncclDataType_t type1;
        std::size_t count1;
        int root1;
        bool reduce_on_1;
        const char* shown;
    };
    const std::vector<Mismatch> mismatches = {
        {"count", ncclFloat32, 32, 0, false, "rank 1 called ncclBroadcast(count=32, ncclFloat32, root=0)"},
        {"type", ncclInt32, 64, 0, false, "rank 1 called ncclBroadcast(count=64, ncclInt32, root=0)"},
        {"root", ncclFloat32, 64, 1, false, "rank 1 called ncclBroadcast(count=64, ncclFloat32, root=1)"},
        {"order", ncclFloat32, 64, 0, true, "rank 1 called ncclAllReduce(count=64, ncclFloat32, ncclSum)"},
    };
    for (const Mismatch& mismatch : mismatches) {
        CAPTURE(mismatch.name);
        const auto outcome = run_in_child([&] {
            conformance::use_machine("hgx-h200-8");
            auto comms = all_comms(2);
            auto buffers = buffers_on_devices(2);
            ncclGroupStart();
            ncclBroadcast(buffers[0], buffers[0], 64, ncclFloat32, 0, comms[0], nullptr);
            if (mismatch.reduce_on_1)
                ncclAllReduce(buffers[1], buffers[1], 64, ncclFloat32, ncclSum, comms[1], nullptr);
            else
                ncclBroadcast(buffers[1], buffers[1], mismatch.count1, mismatch.type1, mismatch.root1, comms[1], nullptr);
            ncclGroupEnd();
        });
        CAPTURE(outcome.standard_error);
        CHECK(outcome.exit_code == kStoppedStatus);
        CHECK(contains(outcome.standard_error, "disagree on their collective #1"));
        CHECK(contains(outcome.standard_error, "rank 0 called ncclBroadcast(count=64, ncclFloat32, root=0)"));
        CHECK(contains(outcome.standard_error, mismatch.shown));
    }
}

TEST_CASE("a send whose receive is never posted is stopped, naming both ranks") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        auto comms = all_comms(2);
        auto buffers = buffers_on_devices(2);
        std::thread receiver([&] {
            int ranks = 0;
            ncclCommCount(comms[1], &ranks);   // and never receives
        });
        std::thread sender([&] {
            cudaSetDevice(0);
            ncclSend(buffers[0], 64, ncclFloat32, 1, comms[0], nullptr);
        });
        receiver.join();
        sender.join();
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "waits in ncclSend"));
    CHECK(contains(outcome.standard_error, "rank 0 posted ncclSend(count=64, ncclFloat32, to rank 1)"));
    CHECK(contains(outcome.standard_error, "rank 1 never posted the matching ncclRecv from rank 0"));
}

TEST_CASE("one thread per rank, each calling without a group, completes and is never stopped") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        constexpr int n = 4;
        std::vector<int> wrong(n, -1);
        std::vector<std::thread> threads;
        for (int r = 0; r < n; ++r)
            threads.emplace_back([&, r] {
                cudaSetDevice(r);
                ncclComm_t comm = nullptr;
                if (ncclCommInitRank(&comm, n, id, r) != ncclSuccess) return;
                std::vector<float> host(64, static_cast<float>(r + 1));
                float* device = nullptr;
                cudaMalloc(&device, 64 * sizeof(float));
                cudaMemcpy(device, host.data(), 64 * sizeof(float), cudaMemcpyHostToDevice);
                // A thread that arrives late makes the others wait without being a hang.
                if (r == 3) std::this_thread::sleep_for(std::chrono::milliseconds(200));
                for (int round = 0; round < 3; ++round)
                    if (ncclAllReduce(device, device, 64, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) return;
                cudaMemcpy(host.data(), device, 64 * sizeof(float), cudaMemcpyDeviceToHost);
                // Each round multiplies the sum by n: (1 + 2 + 3 + 4) * 4 * 4.
                wrong[r] = 0;
                for (float value : host) wrong[r] += value != 10.0f * n * n;
                ncclCommDestroy(comm);
            });
        for (auto& thread : threads) thread.join();
        for (int r = 0; r < n; ++r)
            if (wrong[r] != 0) _exit(10 + r);
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == 0);
    CHECK_FALSE(contains(outcome.standard_error, "mgpu-sim: NCCL"));
}

TEST_CASE("a program that ends while a rank's posted work was never matched exits with the diagnosis") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;   // non-blocking: calls return before the other ranks join
        std::vector<ncclComm_t> comms(2);
        ncclGroupStart();
        for (int r = 0; r < 2; ++r) {
            cudaSetDevice(r);
            ncclCommInitRankConfig(&comms[r], 2, id, r, &config);
        }
        ncclGroupEnd();
        auto buffers = buffers_on_devices(2);
        ncclAllReduce(buffers[0], buffers[0], 64, ncclFloat32, ncclSum, comms[0], nullptr);
        std::exit(0);   // rank 1 never calls the all-reduce
    });
    CAPTURE(outcome.standard_error);
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "the program ended with NCCL work"));
    CHECK(contains(outcome.standard_error, "rank 1 (device 1) has not called collective #1"));
}

TEST_CASE("a lone thread polling a non-blocking communicator that the other ranks never join is stopped") {
    const auto outcome = run_in_child([] {
        conformance::use_machine("hgx-h200-8");
        ncclUniqueId id;
        ncclGetUniqueId(&id);
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        ncclComm_t comm = nullptr;
        ncclCommInitRankConfig(&comm, 2, id, 0, &config);   // rank 1 never joins
        ncclResult_t state = ncclInProgress;
        while (state == ncclInProgress) ncclCommGetAsyncError(comm, &state);
    });
    CAPTURE(outcome.standard_error.substr(0, 2000));
    CHECK(outcome.exit_code == kStoppedStatus);
    CHECK(contains(outcome.standard_error, "keeps polling ncclCommGetAsyncError"));
    CHECK(contains(outcome.standard_error, "rank 1 never called ncclCommInitRankConfig"));
}
