// Per-device settings and host mappings programs ask for: cudaDeviceGetLimit/SetLimit with CUDA 13's
// defaults, the cache configuration calls, and cudaHostGetDevicePointer for page-locked memory
// (the same address on a machine with unified addressing).
#include <doctest/doctest.h>

#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

std::size_t limit(cudaLimit which) {
    std::size_t value = 0;
    REQUIRE(cudaDeviceGetLimit(&value, which) == cudaSuccess);
    return value;
}

}  // namespace

// The defaults as CUDA 13.0 answered them on an H200.
TEST_CASE("the limits start at CUDA's defaults and keep what cudaDeviceSetLimit sets") {
    use_machine("h200");
    CHECK(limit(cudaLimitStackSize) == 1024);
    CHECK(limit(cudaLimitPrintfFifoSize) == 8650752);
    CHECK(limit(cudaLimitMallocHeapSize) == 8388608);
    CHECK(limit(cudaLimitDevRuntimePendingLaunchCount) == 2048);
    CHECK(limit(cudaLimitMaxL2FetchGranularity) == 64);
    CHECK(limit(cudaLimitPersistingL2CacheSize) == 11796480);
    CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20) == cudaSuccess);
    CHECK(limit(cudaLimitMallocHeapSize) == 64u << 20);
    std::size_t value = 0;
    CHECK(cudaDeviceGetLimit(&value, cudaLimitDevRuntimeSyncDepth) == cudaErrorUnsupportedLimit);
    CHECK(cudaGetLastError() == cudaErrorUnsupportedLimit);
    CHECK(cudaDeviceGetLimit(&value, static_cast<cudaLimit>(99)) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("the device starts with no cache preference and keeps the one cudaDeviceSetCacheConfig sets") {
    use_machine("h200");
    cudaFuncCache config = cudaFuncCachePreferL1;
    CHECK(cudaDeviceGetCacheConfig(&config) == cudaSuccess);
    CHECK(config == cudaFuncCachePreferNone);
    CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared) == cudaSuccess);
    CHECK(cudaDeviceGetCacheConfig(&config) == cudaSuccess);
    CHECK(config == cudaFuncCachePreferShared);
    CHECK(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(7)) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("cudaHostGetDevicePointer maps page-locked memory to its own address and refuses other memory with 1") {
    use_machine("h200");
    float* pinned = nullptr;
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 4096, cudaHostAllocMapped) == cudaSuccess);
    float* device_view = nullptr;
    CHECK(cudaHostGetDevicePointer(&device_view, pinned, 0) == cudaSuccess);
    CHECK(device_view == pinned);
    unsigned flags = 0;
    CHECK(cudaHostGetFlags(&flags, pinned) == cudaSuccess);
    CHECK((flags & cudaHostAllocMapped) != 0);
    CHECK(cudaHostGetDevicePointer(&device_view, pinned, 1) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    std::vector<float> pageable(16);
    CHECK(cudaHostGetDevicePointer(&device_view, pageable.data(), 0) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}
