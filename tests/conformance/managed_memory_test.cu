// Managed memory (cudaMallocManaged): the host reads and writes it directly, kernels on any device
// see the same bytes, cudaPointerGetAttributes calls it managed, prefetches and advice are accepted
// for it and refused for other memory, and the flags are checked as CUDA checks them.
#include <doctest/doctest.h>

#include "conformance_support.h"

using conformance::use_machine;

__global__ void add_to_each(int* values, int amount, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] += amount;
}

TEST_CASE("host code and kernels on two devices update one managed array in turn") {
    use_machine("hgx-h200-8");
    constexpr int kCount = 1000;
    int* values = nullptr;
    REQUIRE(cudaMallocManaged(&values, kCount * sizeof(int)) == cudaSuccess);
    for (int i = 0; i < kCount; ++i) values[i] = i;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    add_to_each<<<(kCount + 255) / 256, 256>>>(values, 10, kCount);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    add_to_each<<<(kCount + 255) / 256, 256>>>(values, 100, kCount);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    for (int i = 0; i < kCount; ++i) {
        CAPTURE(i);
        REQUIRE(values[i] == i + 110);
    }
    CHECK(cudaFree(values) == cudaSuccess);
}

TEST_CASE("cudaPointerGetAttributes reports managed memory as cudaMemoryTypeManaged at one address for both sides") {
    use_machine("h200");
    void* p = nullptr;
    REQUIRE(cudaMallocManaged(&p, 4096) == cudaSuccess);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeManaged);
    CHECK(attributes.device == 0);
    CHECK(attributes.devicePointer == p);
    CHECK(attributes.hostPointer == p);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("prefetches and advice are accepted for managed memory and refused with 1 for other memory") {
    use_machine("h200");
    constexpr std::size_t kBytes = 1 << 20;
    void* managed = nullptr;
    REQUIRE(cudaMallocManaged(&managed, kBytes) == cudaSuccess);
    cudaMemLocation device{cudaMemLocationTypeDevice, 0};
    cudaMemLocation host{cudaMemLocationTypeHost, 0};
    CHECK(cudaMemPrefetchAsync(managed, kBytes, device, 0, nullptr) == cudaSuccess);
    CHECK(cudaMemPrefetchAsync(managed, kBytes, host, 0, nullptr) == cudaSuccess);
    CHECK(cudaMemAdvise(managed, kBytes, cudaMemAdviseSetReadMostly, device) == cudaSuccess);
    CHECK(cudaMemAdvise(managed, kBytes, cudaMemAdviseSetPreferredLocation, device) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);

    int ordinary = 0;
    CHECK(cudaMemPrefetchAsync(&ordinary, sizeof ordinary, host, 0, nullptr) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFree(managed) == cudaSuccess);
}

TEST_CASE("cudaMallocManaged takes cudaMemAttachGlobal or cudaMemAttachHost, not 0, both or cudaMemAttachSingle; 0 bytes give null") {
    use_machine("h200");
    void* p = nullptr;
    CHECK(cudaMallocManaged(&p, 1024, cudaMemAttachHost) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    for (unsigned flags : {0u, 3u, static_cast<unsigned>(cudaMemAttachSingle)}) {
        CAPTURE(flags);
        CHECK(cudaMallocManaged(&p, 1024, flags) == cudaErrorInvalidValue);
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
    p = &p;   // zero bytes succeed and give a null pointer, as cudaMalloc does
    CHECK(cudaMallocManaged(&p, 0) == cudaSuccess);
    CHECK(p == nullptr);
    CHECK(cudaMallocManaged(static_cast<void**>(nullptr), 16) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}
