// cuda-facts.md: on a machine without a GPU or driver (preset "none"), cudaGetDeviceCount
// returns 35 and leaves the count unwritten, while cudaRuntimeGetVersion still works.
#include <doctest/doctest.h>

#include "conformance_support.h"

using conformance::use_machine;

namespace {
constexpr int kUnwritten = 12345;
}

TEST_CASE("no driver: cudaGetDeviceCount returns 35 and leaves the count unwritten") {
    use_machine("none");
    int count = kUnwritten;
    CHECK(cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver);
    CHECK(count == kUnwritten);
}

// Measured with the CUDA 13.0 runtime on a machine without a driver (2026-12-02): the runtime never
// starts, and each error query tries again, so 35 cannot be cleared (100 and 101 behave the same on
// an H200, device_selection_test.cpp).
TEST_CASE("no driver: the last error is 35 and reading it does not clear it") {
    use_machine("none");
    int count = kUnwritten;
    REQUIRE(cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver);
    CHECK(cudaPeekAtLastError() == cudaErrorInsufficientDriver);
    CHECK(cudaGetLastError() == cudaErrorInsufficientDriver);
    CHECK(cudaGetLastError() == cudaErrorInsufficientDriver);
}

TEST_CASE("no driver: the last error is 35 even before any other call") {
    use_machine("none");
    CHECK(cudaGetLastError() == cudaErrorInsufficientDriver);
    CHECK(cudaPeekAtLastError() == cudaErrorInsufficientDriver);
    int device = kUnwritten;
    CHECK(cudaGetDevice(&device) == cudaErrorInsufficientDriver);
    CHECK(device == kUnwritten);
}

TEST_CASE("no driver: cudaRuntimeGetVersion still works and reports CUDA 13.0") {
    use_machine("none");
    int version = 0;
    CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);   // 1000 * major + 10 * minor
}

TEST_CASE("cudaRuntimeGetVersion reports CUDA 13.0 on a machine with GPUs") {
    use_machine("hgx-h200-8");
    int version = 0;
    CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
}

TEST_CASE("no driver: cudaDriverGetVersion reports 0 as the driver version") {
    // The runtime documentation: "If no driver is installed, then 0 is returned as the driver version".
    use_machine("none");
    int version = kUnwritten;
    CHECK(cudaDriverGetVersion(&version) == cudaSuccess);
    CHECK(version == 0);
}

TEST_CASE("no driver: a call that needs a device fails instead of succeeding") {
    use_machine("none");
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1024) != cudaSuccess);
    CHECK(p == nullptr);
}

TEST_CASE("a machine with a driver comes back after a machine without one") {
    use_machine("none");
    int count = kUnwritten;
    REQUIRE(cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver);
    use_machine("h200");
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(count == 1);
    CHECK(cudaGetLastError() == cudaSuccess);   // reset_machine throws error state away
}
