// cuda-facts.md, "Errors and the last error": the cudaMalloc / cudaFree rows, plus the
// documented behaviour of plain copies and memsets (checked against host computations).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {
constexpr std::size_t kH200TotalMem = 150109880320ull;   // cuda-facts.md, totalGlobalMem
constexpr std::size_t kH200FreeMem = 149557477376ull;    // cuda-facts.md, cudaMemGetInfo free
void* const kSentinel = reinterpret_cast<void*>(std::uintptr_t{0x5a5a5a5a});
}  // namespace

TEST_CASE("cudaMalloc of more than the device has returns 2 and sets the pointer to null") {
    use_machine("h200");
    void* p = kSentinel;
    CHECK(cudaMalloc(&p, kH200TotalMem + 1) == cudaErrorMemoryAllocation);
    CHECK(p == nullptr);
    p = kSentinel;
    CHECK(cudaMalloc(&p, std::size_t{1} << 50) == cudaErrorMemoryAllocation);
    CHECK(p == nullptr);
}

TEST_CASE("cudaMalloc of more than the device has is not sticky") {
    use_machine("h200");
    void* p = kSentinel;
    REQUIRE(cudaMalloc(&p, kH200TotalMem + 1) == cudaErrorMemoryAllocation);
    void* q = nullptr;
    CHECK(cudaMalloc(&q, 1 << 20) == cudaSuccess);
    CHECK(q != nullptr);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);   // stored once, as any failing call
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaMalloc(&p, 4096) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaFree(q) == cudaSuccess);
}

TEST_CASE("cudaMalloc enforces the device capacity across allocations") {
    use_machine("h200");
    void* first = nullptr;
    const std::size_t most = kH200FreeMem / 4 * 3;   // three quarters of what is free
    REQUIRE(cudaMalloc(&first, most) == cudaSuccess);
    void* second = kSentinel;
    CHECK(cudaMalloc(&second, most) == cudaErrorMemoryAllocation);
    CHECK(second == nullptr);
    CHECK(cudaFree(first) == cudaSuccess);
    CHECK(cudaMalloc(&second, most) == cudaSuccess);   // freeing gave the memory back
    CHECK(cudaFree(second) == cudaSuccess);
}

TEST_CASE("cudaMalloc of 0 bytes returns 0 with a null pointer") {
    use_machine("h200");
    void* p = kSentinel;
    CHECK(cudaMalloc(&p, 0) == cudaSuccess);
    CHECK(p == nullptr);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("cudaFree(nullptr) returns 0") {
    use_machine("h200");
    CHECK(cudaFree(nullptr) == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("a second cudaFree of the same pointer returns 1") {
    use_machine("h200");
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, 1000) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaFree(p) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("cudaFree of a host pointer returns 1") {
    use_machine("h200");
    void* heap = std::malloc(256);
    REQUIRE(heap != nullptr);
    CHECK(cudaFree(heap) == cudaErrorInvalidValue);
    std::free(heap);
    int on_the_stack[4] = {1, 2, 3, 4};
    CHECK(cudaFree(on_the_stack) == cudaErrorInvalidValue);
    // Not sticky: the device still works.
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("cudaMemGetInfo on a fresh H200 reports the measured free and total memory") {
    use_machine("h200");
    std::size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    CHECK(free_bytes == kH200FreeMem);
    CHECK(total_bytes == kH200TotalMem);
}

TEST_CASE("cudaMemGetInfo's free memory drops by at least what cudaMalloc took") {
    use_machine("h200");
    std::size_t free_before = 0, free_after = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
    void* p = nullptr;
    const std::size_t bytes = (std::size_t{1} << 30) + 12345;
    REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
    REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    CHECK(free_after <= free_before - bytes);
    CHECK(cudaFree(p) == cudaSuccess);
    REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
    CHECK(free_after == free_before);
}

TEST_CASE("allocations are counted per device and released by cudaFree") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    std::vector<void*> blocks(3, nullptr);
    for (auto& b : blocks) REQUIRE(cudaMalloc(&b, 3000) == cudaSuccess);
    CHECK(mgpu::sim::live_device_allocations(2) == 3);
    CHECK(mgpu::sim::live_device_allocations(0) == 0);
    CHECK(mgpu::sim::device_bytes_in_use(2) >= 9000);
    CHECK(cudaFree(blocks[1]) == cudaSuccess);
    CHECK(mgpu::sim::live_device_allocations(2) == 2);
    CHECK(cudaFree(blocks[0]) == cudaSuccess);
    CHECK(cudaFree(blocks[2]) == cudaSuccess);
    CHECK(mgpu::sim::live_device_allocations(2) == 0);
    CHECK(mgpu::sim::device_bytes_in_use(2) == 0);
}

TEST_CASE("cudaMemcpy host to device and back returns the same bytes, for sizes 1, odd and large") {
    use_machine("h200");
    for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{4097}, std::size_t{1000003}, std::size_t{16} << 20}) {
        CAPTURE(bytes);
        const auto source = conformance::random_floats(bytes / sizeof(float) + 1, static_cast<unsigned>(bytes));
        void* device = nullptr;
        REQUIRE(cudaMalloc(&device, bytes) == cudaSuccess);
        CHECK(cudaMemcpy(device, source.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
        std::vector<unsigned char> back(bytes, 0);
        CHECK(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(std::memcmp(back.data(), source.data(), bytes) == 0);
        CHECK(cudaFree(device) == cudaSuccess);
    }
}

TEST_CASE("cudaMemcpy device to device copies within one device, including into an offset") {
    use_machine("h200");
    const std::size_t count = 100001;
    const auto source = conformance::random_floats(count, 42);
    float* a = nullptr;
    float* b = nullptr;
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&a), count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&b), count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(a, source.data(), count * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(b, source.data(), count * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    // b[10 .. 10+half) = a[0 .. half)
    const std::size_t half = count / 2;
    CHECK(cudaMemcpy(b + 10, a, half * sizeof(float), cudaMemcpyDeviceToDevice) == cudaSuccess);
    std::vector<float> expected = source;
    for (std::size_t i = 0; i < half; ++i) expected[10 + i] = source[i];
    std::vector<float> back(count, 0.0f);
    REQUIRE(cudaMemcpy(back.data(), b, count * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(std::memcmp(back.data(), expected.data(), count * sizeof(float)) == 0);
    CHECK(cudaFree(a) == cudaSuccess);
    CHECK(cudaFree(b) == cudaSuccess);
}

TEST_CASE("cudaMemcpy with cudaMemcpyDefault infers the direction from the pointers (unified addressing)") {
    use_machine("hgx-h200-8");
    const std::size_t count = 4099;
    const std::size_t bytes = count * sizeof(float);
    const auto source = conformance::random_floats(count, 9);
    void* on0 = nullptr;
    void* on3 = nullptr;
    REQUIRE(cudaSetDevice(3) == cudaSuccess);
    REQUIRE(cudaMalloc(&on3, bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&on0, bytes) == cudaSuccess);
    CHECK(cudaMemcpy(on0, source.data(), bytes, cudaMemcpyDefault) == cudaSuccess);
    CHECK(cudaMemcpy(on3, on0, bytes, cudaMemcpyDefault) == cudaSuccess);
    std::vector<float> back(count, 0.0f);
    CHECK(cudaMemcpy(back.data(), on3, bytes, cudaMemcpyDefault) == cudaSuccess);
    CHECK(std::memcmp(back.data(), source.data(), bytes) == 0);
}

TEST_CASE("cudaMemset sets every byte of the range to the low byte of the value") {
    use_machine("h200");
    const std::size_t bytes = 10007;
    const auto source = conformance::random_floats(bytes / sizeof(float) + 1, 3);
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, bytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(device, source.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    const std::size_t offset = 13, length = 5000;
    CHECK(cudaMemset(static_cast<char*>(device) + offset, 0x1A7, length) == cudaSuccess);
    std::vector<unsigned char> expected(bytes);
    std::memcpy(expected.data(), source.data(), bytes);
    std::memset(expected.data() + offset, 0xA7, length);
    std::vector<unsigned char> back(bytes, 0);
    REQUIRE(cudaMemcpy(back.data(), device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back == expected);
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("cudaMallocHost gives page-locked host memory that cudaFreeHost releases") {
    use_machine("h200");
    const std::size_t before = mgpu::sim::live_pinned_host_allocations();
    void* pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, 1 << 20) == cudaSuccess);
    REQUIRE(pinned != nullptr);
    std::memset(pinned, 0x3c, 1 << 20);   // host code may touch it directly
    CHECK(mgpu::sim::live_pinned_host_allocations() == before + 1);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(mgpu::sim::live_pinned_host_allocations() == before);
}

TEST_CASE("device memory of each device lies in its own address range") {
    use_machine("hgx-h200-8");
    std::vector<void*> blocks(8, nullptr);
    for (int d = 0; d < 8; ++d) {
        REQUIRE(cudaSetDevice(d) == cudaSuccess);
        REQUIRE(cudaMalloc(&blocks[d], 1 << 16) == cudaSuccess);
    }
    for (int a = 0; a < 8; ++a)
        for (int b = a + 1; b < 8; ++b) CHECK(blocks[a] != blocks[b]);
    for (int d = 0; d < 8; ++d) {
        cudaPointerAttributes attributes{};
        REQUIRE(cudaPointerGetAttributes(&attributes, blocks[d]) == cudaSuccess);
        CHECK(attributes.type == cudaMemoryTypeDevice);
        CHECK(attributes.device == d);
    }
}
