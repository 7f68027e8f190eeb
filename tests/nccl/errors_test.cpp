// Errors as NCCL returns them: the rows of cuda-facts.md's NCCL section (observed on an H200)
// and lessons-1-2-4.md 3.6 (invalid arguments are reported at the call and change nothing).
#include <doctest/doctest.h>

#include <set>

#include "mgpu/sim/control.h"
#include "nccl_test_support.h"

using namespace nccl_tests;
using conformance::use_machine;

TEST_CASE("ncclResult_t values, the version and the error strings are NCCL 2.28's") {
    use_machine("h200");
    CHECK(ncclSuccess == 0);
    CHECK(ncclUnhandledCudaError == 1);
    CHECK(ncclSystemError == 2);
    CHECK(ncclInternalError == 3);
    CHECK(ncclInvalidArgument == 4);
    CHECK(ncclInvalidUsage == 5);
    CHECK(ncclRemoteError == 6);
    CHECK(ncclInProgress == 7);
    int version = 0;
    CHECK(ncclGetVersion(&version) == ncclSuccess);
    CHECK(version == 2 * 10000 + 28 * 100 + NCCL_PATCH);
    CHECK(NCCL_VERSION(2, 8, 4) == 2804);   // the older spelling, below 2.9
    std::set<std::string> texts;
    for (int code = 0; code < ncclNumResults; ++code) texts.insert(ncclGetErrorString(static_cast<ncclResult_t>(code)));
    CHECK(texts.size() == static_cast<std::size_t>(ncclNumResults));
    CHECK(std::string(ncclGetErrorString(ncclSuccess)) == "no error");
}

TEST_CASE("ncclCommInitAll: one GPU works, a duplicate device gives 5, more devices than exist gives 1, none gives 0") {
    use_machine("h200");
    ncclComm_t comms[2] = {nullptr, nullptr};
    const int one[] = {0};
    CHECK(ncclCommInitAll(comms, 1, one) == ncclSuccess);
    CHECK(ncclCommDestroy(comms[0]) == ncclSuccess);
    const int twice[] = {0, 0};
    CHECK(ncclCommInitAll(comms, 2, twice) == ncclInvalidUsage);
    CHECK(ncclCommInitAll(comms, 2, nullptr) == ncclUnhandledCudaError);
    CHECK(ncclCommInitAll(comms, 0, nullptr) == ncclSuccess);
}

TEST_CASE("bad operation, datatype or root give 4 at the call; a null send buffer gives 1") {
    use_machine("hgx-h200-8");
    Comms comms(1);
    DeviceBuffer buffer(0, 64);
    void* p = buffer.get();
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, static_cast<ncclRedOp_t>(ncclNumOps), comms[0], nullptr) ==
          ncclInvalidArgument);
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, static_cast<ncclRedOp_t>(-1), comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclAllReduce(p, p, 4, static_cast<ncclDataType_t>(ncclNumTypes), ncclSum, comms[0], nullptr) ==
          ncclInvalidArgument);
    CHECK(ncclBroadcast(p, p, 4, ncclFloat32, 1, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclReduce(p, p, 4, ncclFloat32, ncclSum, -1, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclSend(p, 4, ncclFloat32, 2, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclAllReduce(nullptr, p, 4, ncclFloat32, ncclSum, comms[0], nullptr) == ncclUnhandledCudaError);
    // The communicator is still usable afterwards: invalid arguments have no effect.
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comms[0], nullptr) == ncclSuccess);
    CHECK(std::string(ncclGetLastError(comms[0])).size() > 0);
}

TEST_CASE("a null communicator gives 4, and a destroyed one gives 4 when used or destroyed again") {
    use_machine("hgx-h200-8");
    DeviceBuffer buffer(0, 64);
    void* p = buffer.get();
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, nullptr, nullptr) == ncclInvalidArgument);
    int value = 0;
    CHECK(ncclCommCount(nullptr, &value) == ncclInvalidArgument);
    ncclComm_t comm = nullptr;
    const int device0[] = {0};
    REQUIRE(ncclCommInitAll(&comm, 1, device0) == ncclSuccess);
    CHECK(ncclCommDestroy(comm) == ncclSuccess);
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, comm, nullptr) == ncclInvalidArgument);
    CHECK(ncclCommDestroy(comm) == ncclInvalidArgument);
    CHECK(ncclCommCount(comm, &value) == ncclInvalidArgument);
}

TEST_CASE("a stream of another device is refused through CUDA (1); stream 0 is the communicator's device's") {
    use_machine("hgx-h200-8");
    Comms comms(2);
    DeviceBuffer buffer(0, 64);
    cudaStream_t on_device1 = nullptr;
    cudaSetDevice(1);
    REQUIRE(cudaStreamCreate(&on_device1) == cudaSuccess);
    cudaSetDevice(0);
    void* p = buffer.get();
    ncclComm_t single = nullptr;
    const int device0[] = {0};
    REQUIRE(ncclCommInitAll(&single, 1, device0) == ncclSuccess);
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, single, on_device1) == ncclUnhandledCudaError);
    // With device 1 current, stream 0 still means device 0's stream for a device-0 communicator.
    cudaSetDevice(1);
    CHECK(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, single, nullptr) == ncclSuccess);
    cudaSetDevice(0);
    CHECK(ncclCommDestroy(single) == ncclSuccess);
    cudaStreamDestroy(on_device1);
}

TEST_CASE("ncclGroupEnd without ncclGroupStart gives 5") {
    use_machine("h200");
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
}

TEST_CASE("a send to self without its receive in the same launch gives 5, as on the H200; with it, it works") {
    use_machine("h200");
    ncclComm_t comm = nullptr;
    REQUIRE(ncclCommInitAll(&comm, 1, nullptr) == ncclSuccess);
    float* buffer = nullptr;
    cudaMalloc(&buffer, 8 * sizeof(float));
    CHECK(ncclSend(buffer, 2, ncclFloat, 0, comm, nullptr) == ncclInvalidUsage);
    CHECK(std::string(ncclGetLastError(comm)).find("send to self") != std::string::npos);
    CHECK(ncclRecv(buffer, 2, ncclFloat, 0, comm, nullptr) == ncclInvalidUsage);
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclSend(buffer, 2, ncclFloat, 0, comm, nullptr) == ncclSuccess);
    CHECK(ncclRecv(buffer + 4, 2, ncclFloat, 0, comm, nullptr) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    cudaFree(buffer);
    CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("two ranks of one communicator on the same device fail with 5 (Duplicate GPU detected)") {
    use_machine("hgx-h200-8");
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    ncclComm_t comms[2] = {nullptr, nullptr};
    cudaSetDevice(0);
    REQUIRE(ncclGroupStart() == ncclSuccess);
    CHECK(ncclCommInitRank(&comms[0], 2, id, 0) == ncclSuccess);
    CHECK(ncclCommInitRank(&comms[1], 2, id, 1) == ncclSuccess);
    CHECK(ncclGroupEnd() == ncclInvalidUsage);
    CHECK(std::string(ncclGetLastError(comms[0])).find("Duplicate GPU detected") != std::string::npos);
    ncclResult_t state = ncclSuccess;
    CHECK(ncclCommGetAsyncError(comms[0], &state) == ncclSuccess);
    CHECK(state == ncclInvalidUsage);
    CHECK(ncclCommAbort(comms[0]) == ncclSuccess);
    CHECK(ncclCommAbort(comms[1]) == ncclSuccess);
}

TEST_CASE("InitRank checks its arguments: rank outside 0..nranks-1, nranks below 1, a null comm, a raw config") {
    use_machine("hgx-h200-8");
    ncclUniqueId id;
    REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
    ncclComm_t comm = nullptr;
    CHECK(ncclCommInitRank(&comm, 2, id, 2) == ncclInvalidArgument);
    CHECK(ncclCommInitRank(&comm, 2, id, -1) == ncclInvalidArgument);
    CHECK(ncclCommInitRank(&comm, 0, id, 0) == ncclInvalidArgument);
    CHECK(ncclCommInitRank(nullptr, 1, id, 0) == ncclInvalidArgument);
    ncclConfig_t raw{};
    CHECK(ncclCommInitRankConfig(&comm, 1, id, 0, &raw) == ncclInvalidArgument);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    CHECK(ncclCommInitRankConfig(&comm, 1, id, 0, &config) == ncclSuccess);
    CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("ncclMemAlloc gives device memory a collective can use; registration is accepted and undone") {
    use_machine("hgx-h200-8");
    Comms comms(2);
    void* buffers[2] = {nullptr, nullptr};
    void* handles[2] = {nullptr, nullptr};
    for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        REQUIRE(ncclMemAlloc(&buffers[r], 1000) == ncclSuccess);
        cudaPointerAttributes attributes{};
        REQUIRE(cudaPointerGetAttributes(&attributes, buffers[r]) == cudaSuccess);
        CHECK(attributes.type == cudaMemoryTypeDevice);
        CHECK(attributes.device == r);
        CHECK(ncclCommRegister(comms[r], buffers[r], 1000, &handles[r]) == ncclSuccess);
        const std::vector<float> ones(250, 1.0f);
        REQUIRE(cudaMemcpy(buffers[r], ones.data(), 1000, cudaMemcpyHostToDevice) == cudaSuccess);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < 2; ++r)
        REQUIRE(ncclAllReduce(buffers[r], buffers[r], 250, ncclFloat32, ncclSum, comms[r], nullptr) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < 2; ++r) {
        std::vector<float> back(250, 0.0f);
        REQUIRE(cudaMemcpy(back.data(), buffers[r], 1000, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(back == std::vector<float>(250, 2.0f));
        CHECK(ncclCommDeregister(comms[r], handles[r]) == ncclSuccess);
        CHECK(ncclCommDeregister(comms[r], handles[r]) == ncclInvalidArgument);
        CHECK(ncclMemFree(buffers[r]) == ncclSuccess);
    }
    cudaSetDevice(0);
}

// The trace keeps NCCL's reason with each failed call, so a grader can say why without asking
// ncclGetLastError at the right moment; ncclGroupEnd that returns a refusal again carries its
// reason, and a call that succeeds carries none.
TEST_CASE("a failed NCCL call's trace record holds NCCL's reason; ncclGroupEnd repeats the refusal's") {
    use_machine("hgx-h200-8");
    std::vector<ncclComm_t> comms(2);
    REQUIRE(ncclCommInitAll(comms.data(), 2, nullptr) == ncclSuccess);
    float* buffer = nullptr;
    cudaMalloc(&buffer, 8 * sizeof(float));
    CHECK(ncclGroupStart() == ncclSuccess);
    CHECK(ncclBroadcast(buffer, buffer, 2, ncclFloat, 7, comms[0], nullptr) == ncclInvalidArgument);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    CHECK(ncclCommCount(comms[0], nullptr) == ncclInvalidArgument);
    int count = 0;
    CHECK(ncclCommCount(comms[0], &count) == ncclSuccess);
    std::vector<mgpu::trace::ApiCall> nccl;
    for (const auto& call : mgpu::sim::trace().calls)
        if (call.name.rfind("nccl", 0) == 0) nccl.push_back(call);
    REQUIRE(nccl.size() >= 5);
    const auto& broadcast = nccl[nccl.size() - 4];
    const auto& group_end = nccl[nccl.size() - 3];
    CHECK(broadcast.name == "ncclBroadcast");
    CHECK(broadcast.reason == "Invalid root 7, nranks 2");
    CHECK(group_end.name == "ncclGroupEnd");
    CHECK(group_end.reason == broadcast.reason);
    CHECK(nccl.back().reason.empty());
    for (ncclComm_t comm : comms) ncclCommDestroy(comm);
    cudaFree(buffer);
}
