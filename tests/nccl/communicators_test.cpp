// Communicators (lessons-1-2-4.md 3.2, 3.7; NCCL docs api/comms.rst): ncclCommInitAll's ranks
// follow the device list, ncclCommSplit groups ranks by color and orders them by key, finalize
// and destroy complete the communicator's work first.
#include <doctest/doctest.h>

#include <thread>

#include "nccl_test_support.h"

using namespace nccl_tests;
using conformance::use_machine;

TEST_CASE("ncclCommInitAll gives rank r the r-th device of the list") {
    use_machine("hgx-h200-8");
    const std::vector<int> devices = {5, 2, 7};
    std::vector<ncclComm_t> comms(devices.size());
    REQUIRE(ncclCommInitAll(comms.data(), 3, devices.data()) == ncclSuccess);
    for (int r = 0; r < 3; ++r) {
        int rank = -1, count = -1, device = -1;
        CHECK(ncclCommUserRank(comms[r], &rank) == ncclSuccess);
        CHECK(ncclCommCount(comms[r], &count) == ncclSuccess);
        CHECK(ncclCommCuDevice(comms[r], &device) == ncclSuccess);
        CHECK(rank == r);
        CHECK(count == 3);
        CHECK(device == devices[r]);
    }
    int current = -1;
    cudaGetDevice(&current);
    CHECK(current == 0);   // the caller's device is left as it was
    for (ncclComm_t comm : comms) CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("ncclCommSplit by color and key: halves, a reversed order, and ranks left out with NCCL_SPLIT_NOCOLOR") {
    use_machine("hgx-h200-8");
    const int n = 6;
    Comms parent(n);
    std::vector<ncclComm_t> halves(n, nullptr);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    // Color: which half; key: the negated parent rank, so each half's ranks run backwards.
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclCommSplit(parent[r], r / (n / 2), -r, &halves[r], nullptr) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        int rank = -1, count = -1, device = -1;
        REQUIRE(halves[r] != nullptr);
        CHECK(ncclCommUserRank(halves[r], &rank) == ncclSuccess);
        CHECK(ncclCommCount(halves[r], &count) == ncclSuccess);
        CHECK(ncclCommCuDevice(halves[r], &device) == ncclSuccess);
        CHECK(count == n / 2);
        CHECK(rank == (n / 2 - 1) - r % (n / 2));
        CHECK(device == r);
    }
    // A sum over each half sees only that half's values.
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < n; ++r) {
        buffers.emplace_back(r, sizeof(std::int64_t));
        buffers[r].upload(encode(ncclInt64, {static_cast<double>(1 << r)}));
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), 1, ncclInt64, ncclSum, halves[r], nullptr) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        const double expected = r < n / 2 ? 1 + 2 + 4 : 8 + 16 + 32;
        CHECK(get(buffers[r].download(sizeof(std::int64_t)), ncclInt64, 0) == expected);
    }
    for (ncclComm_t comm : halves) CHECK(ncclCommDestroy(comm) == ncclSuccess);

    // Only the first two ranks: the others pass NCCL_SPLIT_NOCOLOR and get a null communicator.
    std::vector<ncclComm_t> pair(n, nullptr);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclCommSplit(parent[r], r < 2 ? 0 : NCCL_SPLIT_NOCOLOR, r, &pair[r], nullptr) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) CHECK((pair[r] == nullptr) == (r >= 2));
    for (int r = 0; r < 2; ++r) CHECK(ncclCommDestroy(pair[r]) == ncclSuccess);
}

TEST_CASE("finalize completes the communicator's work; destroy after finalize is local; use after finalize is refused") {
    use_machine("hgx-h200-8", "lazy");
    std::vector<ncclComm_t> own(2);
    REQUIRE(ncclCommInitAll(own.data(), 2, nullptr) == ncclSuccess);
    std::vector<DeviceBuffer> buffers;
    for (int r = 0; r < 2; ++r) {
        buffers.emplace_back(r, 4 * sizeof(float));
        buffers[r].upload(encode(ncclFloat32, {1, 2, 3, 4}));
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 2; ++r)
        REQUIRE(ncclAllReduce(buffers[r].get(), buffers[r].get(), 4, ncclFloat32, ncclSum, own[r], nullptr) ==
                ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    const double before = mgpu::sim::host_now_us();
    for (ncclComm_t comm : own) CHECK(ncclCommFinalize(comm) == ncclSuccess);
    // The host waited for the collective: its clock passed the collective's modelled end.
    const auto collectives = conformance::ops_of_kind(mgpu::trace::OpKind::Collective);
    REQUIRE(collectives.size() == 2);
    CHECK(mgpu::sim::host_now_us() >= collectives.back().end_us);
    CHECK(collectives.back().end_us > before);
    ncclResult_t state = ncclInProgress;
    CHECK(ncclCommGetAsyncError(own[0], &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    CHECK(ncclAllReduce(buffers[0].get(), buffers[0].get(), 4, ncclFloat32, ncclSum, own[0], nullptr) ==
          ncclInvalidUsage);
    for (ncclComm_t comm : own) CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("one host thread per rank: InitRank and collectives without groups, from the threads at once") {
    use_machine("hgx-h200-8", "shuffle:11");
    const int n = 8;
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    std::vector<double> results(n, 0.0);
    std::vector<ncclResult_t> codes(n, ncclInternalError);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            cudaSetDevice(r);
            ncclComm_t comm = nullptr;
            codes[r] = ncclCommInitRank(&comm, n, id, r);
            if (codes[r] != ncclSuccess) return;
            double* value = nullptr;
            cudaMalloc(&value, sizeof(double));
            const double mine = r + 1;
            cudaMemcpy(value, &mine, sizeof mine, cudaMemcpyHostToDevice);
            cudaStream_t stream = nullptr;
            cudaStreamCreate(&stream);
            codes[r] = ncclAllReduce(value, value, 1, ncclFloat64, ncclMax, comm, stream);
            cudaStreamSynchronize(stream);
            cudaMemcpy(&results[r], value, sizeof(double), cudaMemcpyDeviceToHost);
            cudaStreamDestroy(stream);
            cudaFree(value);
            ncclCommDestroy(comm);
        });
    for (auto& thread : threads) thread.join();
    for (int r = 0; r < n; ++r) {
        CHECK(codes[r] == ncclSuccess);
        CHECK(results[r] == static_cast<double>(n));
    }
}
