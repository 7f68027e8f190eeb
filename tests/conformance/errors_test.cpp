// cuda-facts.md, "Error codes" and "Errors and the last error": the numeric values, the names,
// and how a thread's last error is stored, peeked and cleared. Kernel faults (sticky 700) are in
// sticky_fault_test.cu, bad launch configurations in launch_config_test.cu, allocation rows in
// memory_test.cpp.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

// The table of cuda-facts.md: name as CUDA spells it, and value.
const std::vector<std::pair<cudaError_t, std::pair<const char*, int>>> kErrorTable = {
    {cudaSuccess, {"cudaSuccess", 0}},
    {cudaErrorInvalidValue, {"cudaErrorInvalidValue", 1}},
    {cudaErrorMemoryAllocation, {"cudaErrorMemoryAllocation", 2}},
    {cudaErrorInitializationError, {"cudaErrorInitializationError", 3}},
    {cudaErrorInvalidConfiguration, {"cudaErrorInvalidConfiguration", 9}},
    {cudaErrorInsufficientDriver, {"cudaErrorInsufficientDriver", 35}},
    {cudaErrorDevicesUnavailable, {"cudaErrorDevicesUnavailable", 46}},
    {cudaErrorNoDevice, {"cudaErrorNoDevice", 100}},
    {cudaErrorInvalidDevice, {"cudaErrorInvalidDevice", 101}},
    {cudaErrorPeerAccessUnsupported, {"cudaErrorPeerAccessUnsupported", 217}},
    {cudaErrorInvalidResourceHandle, {"cudaErrorInvalidResourceHandle", 400}},
    {cudaErrorNotReady, {"cudaErrorNotReady", 600}},
    {cudaErrorIllegalAddress, {"cudaErrorIllegalAddress", 700}},
    {cudaErrorPeerAccessAlreadyEnabled, {"cudaErrorPeerAccessAlreadyEnabled", 704}},
    {cudaErrorPeerAccessNotEnabled, {"cudaErrorPeerAccessNotEnabled", 705}},
    {cudaErrorTooManyPeers, {"cudaErrorTooManyPeers", 711}},
    {cudaErrorLaunchFailure, {"cudaErrorLaunchFailure", 719}},
    {cudaErrorUnknown, {"cudaErrorUnknown", 999}},
};

}  // namespace

TEST_CASE("error codes have the numeric values of the CUDA 13 runtime") {
    for (const auto& [code, name_and_value] : kErrorTable) {
        CAPTURE(name_and_value.first);
        CHECK(static_cast<int>(code) == name_and_value.second);
    }
}

TEST_CASE("cudaGetErrorName gives each error code's enumerator name") {
    for (const auto& [code, name_and_value] : kErrorTable) {
        const char* name = cudaGetErrorName(code);
        REQUIRE(name != nullptr);
        CHECK(std::string(name) == name_and_value.first);
    }
}

TEST_CASE("cudaGetErrorString gives a non-empty description for each error code") {
    for (const auto& [code, name_and_value] : kErrorTable) {
        CAPTURE(name_and_value.first);
        const char* text = cudaGetErrorString(code);
        REQUIRE(text != nullptr);
        CHECK(std::string(text).size() > 0);
    }
}

TEST_CASE("a failing call stores its code as the last error; later successful calls do not clear it") {
    use_machine("hgx-h200-8");
    CHECK(cudaSetDevice(99) == cudaErrorInvalidDevice);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(cudaSetDevice(1) == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 4096) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
}

TEST_CASE("cudaPeekAtLastError returns the last error without resetting it; cudaGetLastError returns it and resets it to 0") {
    use_machine("h200");
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaSuccess);
    CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaSuccess);
}

TEST_CASE("the last error is the code of the most recent failing call") {
    use_machine("h200");
    CHECK(cudaSetDevice(7) == cudaErrorInvalidDevice);
    int on_the_stack = 0;
    CHECK(cudaFree(&on_the_stack) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("cudaSetDevice(invalid) returns 101 and leaves the current device unchanged") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(3) == cudaSuccess);
    CHECK(cudaSetDevice(8) == cudaErrorInvalidDevice);
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 3);
    CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 3);

    use_machine("h200");
    CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 0);
}

TEST_CASE("the current device is 0 until cudaSetDevice is called") {
    use_machine("hgx-h200-8");
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 0);
}

TEST_CASE("cudaStreamQuery returning 600 (busy) is not stored as the last error") {
    use_machine("h200");
    // A pinned copy returns at once and keeps its stream busy for about 1 ms of modelled time.
    const std::size_t bytes = 64u << 20;
    void* host = nullptr;
    void* device = nullptr;
    REQUIRE(cudaMallocHost(&host, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&device, bytes) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
    CHECK(cudaPeekAtLastError() == cudaSuccess);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaStreamQuery(stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFree(device) == cudaSuccess);
    CHECK(cudaFreeHost(host) == cudaSuccess);
}
