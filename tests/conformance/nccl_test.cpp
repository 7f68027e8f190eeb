// NCCL in one process, one rank per visible device, as NCCL 2.28's documentation and the H200
// (cuda-facts.md, NCCL section) answer: communicator queries, every collective's result in and out
// of place, ncclAvg, errors and teardown. One GPU hosts the one-rank rows on real hardware; the
// simulator runs every row on one, four and eight GPUs. Expected values are computed here from the
// inputs, never read from the library under test.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <nccl.h>

#include "conformance_support.h"

using conformance::use_machine_if_hostable;

namespace {

const std::vector<std::string> kMachines = {"h200", "islands-2x2", "hgx-h200-8"};

// One communicator per device from ncclCommInitAll, a stream and a device buffer per rank.
struct Ranks {
    int count = 0;
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;

    Ranks() {
        REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
        comms.resize(count);
        streams.resize(count);
        REQUIRE(ncclCommInitAll(comms.data(), count, nullptr) == ncclSuccess);
        for (int r = 0; r < count; ++r) {
            REQUIRE(cudaSetDevice(r) == cudaSuccess);
            REQUIRE(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking) == cudaSuccess);
        }
    }
    ~Ranks() {
        for (int r = 0; r < count; ++r) {
            cudaSetDevice(r);
            cudaStreamSynchronize(streams[r]);
            cudaStreamDestroy(streams[r]);
            ncclCommDestroy(comms[r]);
        }
        cudaSetDevice(0);
    }
    Ranks(const Ranks&) = delete;
    Ranks& operator=(const Ranks&) = delete;

    void synchronize() const {
        for (int r = 0; r < count; ++r) {
            REQUIRE(cudaSetDevice(r) == cudaSuccess);
            REQUIRE(cudaStreamSynchronize(streams[r]) == cudaSuccess);
        }
    }
};

// A device buffer of T per rank, filled from the host and read back.
template <class T>
struct PerRank {
    const Ranks& ranks;
    std::size_t count;
    std::vector<T*> buffers;

    PerRank(const Ranks& owner, std::size_t elements) : ranks(owner), count(elements), buffers(owner.count) {
        for (int r = 0; r < ranks.count; ++r) {
            REQUIRE(cudaSetDevice(r) == cudaSuccess);
            REQUIRE(cudaMalloc(&buffers[r], std::max<std::size_t>(count, 1) * sizeof(T)) == cudaSuccess);
        }
    }
    ~PerRank() {
        for (int r = 0; r < ranks.count; ++r) {
            cudaSetDevice(r);
            cudaFree(buffers[r]);
        }
    }
    PerRank(const PerRank&) = delete;
    PerRank& operator=(const PerRank&) = delete;

    void fill(int rank, const std::vector<T>& values) {
        REQUIRE(cudaSetDevice(rank) == cudaSuccess);
        REQUIRE(cudaMemcpy(buffers[rank], values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice) ==
                cudaSuccess);
    }
    std::vector<T> read(int rank) const {
        std::vector<T> values(count);
        REQUIRE(cudaSetDevice(rank) == cudaSuccess);
        REQUIRE(cudaMemcpy(values.data(), buffers[rank], count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
        return values;
    }
};

// Rank r's input: element i is (r + 1) * 10 + i, so every rank and element differ.
std::vector<std::int32_t> rank_input(int rank, std::size_t count) {
    std::vector<std::int32_t> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = (rank + 1) * 10 + static_cast<std::int32_t>(i);
    return values;
}

}  // namespace

TEST_CASE("ncclGetVersion answers the version of the nccl.h the program was built with") {
    int version = 0;
    REQUIRE(ncclGetVersion(&version) == ncclSuccess);
    CHECK(version == NCCL_VERSION_CODE);
    CHECK(version >= NCCL_VERSION(2, 28, 0));
    CHECK(ncclGetVersion(nullptr) == ncclInvalidArgument);
}

TEST_CASE("ncclCommInitAll gives one communicator per device, ranks in device order") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        for (int r = 0; r < ranks.count; ++r) {
            int count = -1, device = -1, rank = -1;
            CHECK(ncclCommCount(ranks.comms[r], &count) == ncclSuccess);
            CHECK(ncclCommCuDevice(ranks.comms[r], &device) == ncclSuccess);
            CHECK(ncclCommUserRank(ranks.comms[r], &rank) == ncclSuccess);
            CHECK(count == ranks.count);
            CHECK(device == r);
            CHECK(rank == r);
            ncclResult_t async_error = ncclInternalError;
            CHECK(ncclCommGetAsyncError(ranks.comms[r], &async_error) == ncclSuccess);
            CHECK(async_error == ncclSuccess);
        }
    }
}

TEST_CASE("all-reduce sums exactly, in place and out of place, in one group over every rank") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        constexpr std::size_t kCount = 1001;   // odd, so no rank's share is a round number
        PerRank<std::int32_t> send(ranks, kCount), receive(ranks, kCount);
        for (int r = 0; r < ranks.count; ++r) send.fill(r, rank_input(r, kCount));

        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < ranks.count; ++r)
            REQUIRE(ncclAllReduce(send.buffers[r], receive.buffers[r], kCount, ncclInt32, ncclSum, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < ranks.count; ++r)
            REQUIRE(ncclAllReduce(send.buffers[r], send.buffers[r], kCount, ncclInt32, ncclMax, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        ranks.synchronize();

        std::vector<std::int32_t> sum(kCount, 0), largest(kCount, 0);
        for (int r = 0; r < ranks.count; ++r) {
            const auto input = rank_input(r, kCount);
            for (std::size_t i = 0; i < kCount; ++i) {
                sum[i] += input[i];
                largest[i] = std::max(largest[i], input[i]);
            }
        }
        for (int r = 0; r < ranks.count; ++r) {
            CAPTURE(r);
            CHECK(receive.read(r) == sum);
            CHECK(send.read(r) == largest);
        }
    }
}

TEST_CASE("ncclAvg divides integer sums with truncation and scales floats by 1/n") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        constexpr std::size_t kCount = 37;
        PerRank<std::int32_t> integers(ranks, kCount);
        PerRank<float> floats(ranks, kCount);
        for (int r = 0; r < ranks.count; ++r) {
            integers.fill(r, rank_input(r, kCount));
            std::vector<float> values(kCount);
            for (std::size_t i = 0; i < kCount; ++i) values[i] = 0.25f * static_cast<float>((r + 1) * (i + 1));
            floats.fill(r, values);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < ranks.count; ++r) {
            REQUIRE(ncclAllReduce(integers.buffers[r], integers.buffers[r], kCount, ncclInt32, ncclAvg, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
            REQUIRE(ncclAllReduce(floats.buffers[r], floats.buffers[r], kCount, ncclFloat32, ncclAvg, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        ranks.synchronize();

        const int n = ranks.count;
        for (int r = 0; r < n; ++r) {
            const auto got_integers = integers.read(r);
            const auto got_floats = floats.read(r);
            for (std::size_t i = 0; i < kCount; ++i) {
                std::int64_t sum = 0;
                double float_sum = 0;
                for (int k = 0; k < n; ++k) {
                    sum += (k + 1) * 10 + static_cast<std::int64_t>(i);
                    float_sum += 0.25 * (k + 1) * (i + 1);
                }
                CHECK(got_integers[i] == static_cast<std::int32_t>(sum / n));
                CHECK(got_floats[i] == doctest::Approx(float_sum / n).epsilon(1e-6));
            }
        }
    }
}

TEST_CASE("broadcast copies the root's buffer to every rank; all-gather and reduce-scatter place each rank's share") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        const int n = ranks.count;
        const int root = n - 1;
        constexpr std::size_t kShare = 5;
        PerRank<std::int32_t> broadcast(ranks, kShare), gathered(ranks, kShare * n), scattered(ranks, kShare);
        PerRank<std::int32_t> whole(ranks, kShare * n);
        for (int r = 0; r < n; ++r) {
            broadcast.fill(r, rank_input(r, kShare));
            whole.fill(r, rank_input(r, kShare * n));
            // All-gather in place: each rank's share already sits at its offset of the result.
            gathered.fill(r, std::vector<std::int32_t>(kShare * n, -1));
            REQUIRE(cudaMemcpy(gathered.buffers[r] + r * kShare, rank_input(r, kShare).data(),
                               kShare * sizeof(std::int32_t), cudaMemcpyHostToDevice) == cudaSuccess);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            REQUIRE(ncclBroadcast(broadcast.buffers[r], broadcast.buffers[r], kShare, ncclInt32, root, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
            REQUIRE(ncclAllGather(gathered.buffers[r] + r * kShare, gathered.buffers[r], kShare, ncclInt32,
                                  ranks.comms[r], ranks.streams[r]) == ncclSuccess);
            REQUIRE(ncclReduceScatter(whole.buffers[r], scattered.buffers[r], kShare, ncclInt32, ncclSum,
                                      ranks.comms[r], ranks.streams[r]) == ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        ranks.synchronize();

        std::vector<std::int32_t> all;
        for (int r = 0; r < n; ++r) {
            const auto share = rank_input(r, kShare);
            all.insert(all.end(), share.begin(), share.end());
        }
        for (int r = 0; r < n; ++r) {
            CAPTURE(r);
            CHECK(broadcast.read(r) == rank_input(root, kShare));
            CHECK(gathered.read(r) == all);
            std::vector<std::int32_t> expected(kShare, 0);
            for (int k = 0; k < n; ++k) {
                const auto input = rank_input(k, kShare * n);
                for (std::size_t i = 0; i < kShare; ++i) expected[i] += input[r * kShare + i];
            }
            CHECK(scattered.read(r) == expected);
        }
    }
}

TEST_CASE("send and receive in one group move a ring's halos, one rank sending to itself included") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        const int n = ranks.count;
        constexpr std::size_t kCount = 3;
        PerRank<std::int32_t> outgoing(ranks, kCount), incoming(ranks, kCount);
        for (int r = 0; r < n; ++r) {
            outgoing.fill(r, rank_input(r, kCount));
            incoming.fill(r, std::vector<std::int32_t>(kCount, -1));
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            REQUIRE(ncclSend(outgoing.buffers[r], kCount, ncclInt32, (r + 1) % n, ranks.comms[r], ranks.streams[r]) ==
                    ncclSuccess);
            REQUIRE(ncclRecv(incoming.buffers[r], kCount, ncclInt32, (r + n - 1) % n, ranks.comms[r],
                             ranks.streams[r]) == ncclSuccess);
        }
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        ranks.synchronize();
        for (int r = 0; r < n; ++r) CHECK(incoming.read(r) == rank_input((r + n - 1) % n, kCount));
    }
}

TEST_CASE("NCCL's argument and usage errors: 4 for a bad root, op or type, 5 for a send to self alone or a stray ncclGroupEnd") {
    if (!use_machine_if_hostable("h200")) return;
    Ranks ranks;
    PerRank<std::int32_t> buffer(ranks, 4);
    buffer.fill(0, rank_input(0, 4));
    CHECK(ncclBroadcast(buffer.buffers[0], buffer.buffers[0], 4, ncclInt32, 1, ranks.comms[0], ranks.streams[0]) ==
          ncclInvalidArgument);
    CHECK(ncclAllReduce(buffer.buffers[0], buffer.buffers[0], 4, ncclInt32, static_cast<ncclRedOp_t>(99),
                        ranks.comms[0], ranks.streams[0]) == ncclInvalidArgument);
    CHECK(ncclAllReduce(buffer.buffers[0], buffer.buffers[0], 4, static_cast<ncclDataType_t>(99), ncclSum,
                        ranks.comms[0], ranks.streams[0]) == ncclInvalidArgument);
    CHECK(ncclSend(buffer.buffers[0], 4, ncclInt32, 1, ranks.comms[0], ranks.streams[0]) == ncclInvalidArgument);
    CHECK(ncclSend(buffer.buffers[0], 4, ncclInt32, 0, ranks.comms[0], ranks.streams[0]) == ncclInvalidUsage);
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
    // A count of zero is valid and moves nothing.
    CHECK(ncclAllReduce(buffer.buffers[0], buffer.buffers[0], 0, ncclInt32, ncclSum, ranks.comms[0],
                        ranks.streams[0]) == ncclSuccess);
    ranks.synchronize();
    CHECK(buffer.read(0) == rank_input(0, 4));
    CHECK(std::string(ncclGetErrorString(ncclInvalidArgument)) != std::string(ncclGetErrorString(ncclInvalidUsage)));
}

TEST_CASE("ncclCommFinalize then ncclCommDestroy succeed, and destroying a null communicator is allowed") {
    if (!use_machine_if_hostable("h200")) return;
    ncclComm_t comm = nullptr;
    const int first[1] = {0};
    REQUIRE(ncclCommInitAll(&comm, 1, first) == ncclSuccess);
    CHECK(ncclCommFinalize(comm) == ncclSuccess);
    CHECK(ncclCommDestroy(comm) == ncclSuccess);
    CHECK(ncclCommDestroy(nullptr) == ncclSuccess);
}

TEST_CASE("an aborted communicator is gone: ncclCommAbort succeeds on a healthy one") {
    if (!use_machine_if_hostable("h200")) return;
    ncclComm_t comm = nullptr;
    const int first[1] = {0};
    REQUIRE(ncclCommInitAll(&comm, 1, first) == ncclSuccess);
    CHECK(ncclCommAbort(comm) == ncclSuccess);
}

TEST_CASE("the all-reduce's work is ordered in its stream after the kernel-free copy before it") {
    // A copy, then an all-reduce of what it wrote, then a copy back, all on one stream with no host
    // wait between: the result is right only if NCCL's work runs in stream order.
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        const int n = ranks.count;
        constexpr std::size_t kCount = std::size_t{1} << 20;
        PerRank<float> data(ranks, kCount);
        std::vector<std::vector<float>> host(n), back(n, std::vector<float>(kCount));
        for (int r = 0; r < n; ++r) host[r] = conformance::random_floats(kCount, 11u + static_cast<unsigned>(r));
        for (int r = 0; r < n; ++r) {
            REQUIRE(cudaSetDevice(r) == cudaSuccess);
            REQUIRE(cudaMemcpyAsync(data.buffers[r], host[r].data(), kCount * sizeof(float), cudaMemcpyHostToDevice,
                                    ranks.streams[r]) == cudaSuccess);
        }
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r)
            REQUIRE(ncclAllReduce(data.buffers[r], data.buffers[r], kCount, ncclFloat32, ncclSum, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        for (int r = 0; r < n; ++r) {
            REQUIRE(cudaSetDevice(r) == cudaSuccess);
            REQUIRE(cudaMemcpyAsync(back[r].data(), data.buffers[r], kCount * sizeof(float), cudaMemcpyDeviceToHost,
                                    ranks.streams[r]) == cudaSuccess);
        }
        ranks.synchronize();
        std::size_t wrong = 0;
        for (int r = 0; r < n; ++r)
            for (std::size_t i = 0; i < kCount; i += 997) {
                double sum = 0;
                for (int k = 0; k < n; ++k) sum += host[k][i];
                if (back[r][i] != doctest::Approx(sum).epsilon(1e-5)) ++wrong;
            }
        CHECK(wrong == 0);
    }
}

TEST_CASE("an all-reduce shows in the trace as a collective on each rank's device, on the rank's stream") {
    for (const auto& machine : kMachines) {
        if (!use_machine_if_hostable(machine)) continue;
        CAPTURE(machine);
        Ranks ranks;
        const int n = ranks.count;
        PerRank<float> send(ranks, 4096), receive(ranks, 4096);
        for (int r = 0; r < n; ++r) send.fill(r, conformance::random_floats(4096, 5u));
        mgpu::sim::clear_trace();
        REQUIRE(ncclGroupStart() == ncclSuccess);
        for (int r = 0; r < n; ++r)
            REQUIRE(ncclAllReduce(send.buffers[r], receive.buffers[r], 4096, ncclFloat32, ncclAvg, ranks.comms[r],
                                  ranks.streams[r]) == ncclSuccess);
        REQUIRE(ncclGroupEnd() == ncclSuccess);
        ranks.synchronize();
        const auto collectives = conformance::ops_of_kind(mgpu::trace::OpKind::Collective);
        // What the real library ran, for whoever reads a real run's log.
        if (conformance::kRealGpu)
            for (const auto& op : mgpu::sim::trace().ops) {
                const std::string seen = std::string(mgpu::trace::to_string(op.kind)) + " " + op.name;
                MESSAGE(seen);
            }
        for (int r = 0; r < n; ++r) {
            CAPTURE(r);
            bool found = false;
            for (const auto& op : collectives) found = found || op.device == r;
            CHECK(found);
        }
    }
}

// Last in the file: after a refused ncclCommInitAll, real NCCL may leave state behind that later
// cases in the same process would meet.
// Real NCCL (2.28.3 on an H200) ended the process with SIGSEGV in this call; the simulator answers
// as NCCL's documentation says, so the case is the simulator's alone.
TEST_CASE("ncclCommInitAll: zero devices is nothing to do") {
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    throw conformance::CaseSkipped("real NCCL 2.28.3 crashed (SIGSEGV) in ncclCommInitAll with zero devices");
#endif
    if (!use_machine_if_hostable("h200")) return;
    ncclComm_t comms[2] = {nullptr, nullptr};
    CHECK(ncclCommInitAll(comms, 0, nullptr) == ncclSuccess);
}

TEST_CASE("ncclCommInitAll: a device named twice is invalid usage") {
    if (!use_machine_if_hostable("h200")) return;
    ncclComm_t comms[2] = {nullptr, nullptr};
    const int twice[2] = {0, 0};
    CHECK(ncclCommInitAll(comms, 2, twice) == ncclInvalidUsage);
}
