// Allocation rules, copies in every direction, memset and pointer attributes.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "runtime_test_support.h"

using runtime_test::bring_up;

TEST_CASE("cudaMalloc of more than the device has gives 2 with a null pointer, and is not sticky") {
    bring_up("h200");
    void* p = reinterpret_cast<void*>(0x1234);
    CHECK(cudaMalloc(&p, 150109880320ull) == cudaErrorMemoryAllocation);
    CHECK(p == nullptr);
    CHECK(cudaMalloc(&p, 1024) == cudaSuccess);
    CHECK(p != nullptr);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("zero bytes, null and double frees") {
    bring_up("h200");
    void* p = reinterpret_cast<void*>(0x1234);
    CHECK(cudaMalloc(&p, 0) == cudaSuccess);
    CHECK(p == nullptr);
    CHECK(cudaFree(nullptr) == cudaSuccess);
    REQUIRE(cudaMalloc(&p, 256) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaFree(p) == cudaErrorInvalidValue);
    int on_host = 0;
    CHECK(cudaFree(&on_host) == cudaErrorInvalidValue);
}

TEST_CASE("the Nth cudaMalloc fails on request") {
    mgpu::sim::Faults faults;
    faults.malloc_fails_at = 2;
    bring_up("h200", "eager", faults);
    void *a = nullptr, *b = nullptr, *c = nullptr;
    CHECK(cudaMalloc(&a, 64) == cudaSuccess);
    CHECK(cudaMalloc(&b, 64) == cudaErrorMemoryAllocation);
    CHECK(b == nullptr);
    CHECK(cudaMalloc(&c, 64) == cudaSuccess);
    cudaFree(a);
    cudaFree(c);
}

TEST_CASE("host to device to device to host round trip, in every schedule") {
    for (const char* schedule : {"eager", "lazy", "shuffle:7"}) {
        CAPTURE(schedule);
        bring_up("h200", schedule);
        std::vector<int> in(1000), out(1000, 0);
        std::iota(in.begin(), in.end(), 17);
        int *a = nullptr, *b = nullptr;
        REQUIRE(cudaMalloc(&a, in.size() * sizeof(int)) == cudaSuccess);
        REQUIRE(cudaMalloc(&b, in.size() * sizeof(int)) == cudaSuccess);
        CHECK(cudaMemcpy(a, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemcpy(b, a, in.size() * sizeof(int), cudaMemcpyDefault) == cudaSuccess);
        CHECK(cudaMemcpy(out.data(), b, out.size() * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(out == in);
        cudaFree(a);
        cudaFree(b);
    }
}

TEST_CASE("a copy past the end of an allocation or with the wrong direction is refused") {
    bring_up("h200");
    std::vector<char> host(256);
    char* d = nullptr;
    REQUIRE(cudaMalloc(&d, 128) == cudaSuccess);
    CHECK(cudaMemcpy(d, host.data(), 256, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(host.data(), host.data() + 128, 64, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(d, host.data(), 64, static_cast<cudaMemcpyKind>(7)) == cudaErrorInvalidMemcpyDirection);
    cudaFree(d);
}

TEST_CASE("memset and page-locked memory") {
    bring_up("h200", "lazy");
    unsigned char* pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, 64) == cudaSuccess);
    CHECK(mgpu::sim::live_pinned_host_allocations() == 1);
    unsigned char* d = nullptr;
    REQUIRE(cudaMalloc(&d, 64) == cudaSuccess);
    CHECK(cudaMemset(d, 0xab, 64) == cudaSuccess);
    CHECK(cudaMemcpy(pinned, d, 64, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(pinned[0] == 0xab);
    CHECK(pinned[63] == 0xab);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(mgpu::sim::live_pinned_host_allocations() == 0);
    cudaFree(d);
}

TEST_CASE("pointer attributes tell device, page-locked and ordinary memory apart") {
    bring_up("hgx-h200-8");
    cudaSetDevice(2);
    void* d = nullptr;
    REQUIRE(cudaMalloc(&d, 64) == cudaSuccess);
    cudaPointerAttributes attributes;
    REQUIRE(cudaPointerGetAttributes(&attributes, d) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeDevice);
    CHECK(attributes.device == 2);
    CHECK(attributes.devicePointer == d);
    void* pinned = nullptr;
    REQUIRE(cudaHostAlloc(&pinned, 64, cudaHostAllocDefault) == cudaSuccess);
    REQUIRE(cudaPointerGetAttributes(&attributes, pinned) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeHost);
    int plain = 0;
    REQUIRE(cudaPointerGetAttributes(&attributes, &plain) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeUnregistered);
    cudaFreeHost(pinned);
    cudaFree(d);
}

TEST_CASE("host registration") {
    bring_up("h200");
    std::vector<char> buffer(8192);
    CHECK(cudaHostRegister(buffer.data(), buffer.size(), cudaHostRegisterDefault) == cudaSuccess);
    CHECK(cudaHostRegister(buffer.data(), buffer.size(), cudaHostRegisterDefault) ==
          cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaHostUnregister(buffer.data()) == cudaSuccess);
    CHECK(cudaHostUnregister(buffer.data()) == cudaErrorHostMemoryNotRegistered);
}
