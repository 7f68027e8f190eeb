// Device enumeration, properties, versions and the last-error rules (cuda-facts.md).
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "runtime_test_support.h"

using runtime_test::bring_up;

TEST_CASE("one H200 reports the measured properties") {
    bring_up("h200");
    int count = -1;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(count == 1);
    cudaDeviceProp prop;
    REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(std::strcmp(prop.name, "NVIDIA H200") == 0);
    CHECK(prop.totalGlobalMem == 150109880320ull);
    CHECK(prop.multiProcessorCount == 132);
    CHECK(prop.major == 9);
    CHECK(prop.minor == 0);
    CHECK(prop.warpSize == 32);
    CHECK(prop.maxThreadsPerBlock == 1024);
    CHECK(prop.maxThreadsDim[0] == 1024);
    CHECK(prop.maxThreadsDim[2] == 64);
    CHECK(prop.maxGridSize[0] == 2147483647);
    CHECK(prop.maxGridSize[1] == 65535);
    CHECK(prop.sharedMemPerBlock == 49152);
    CHECK(prop.sharedMemPerBlockOptin == 232448);
    CHECK(prop.l2CacheSize == 62914560);
    CHECK(prop.memoryBusWidth == 6016);
    CHECK(prop.asyncEngineCount == 3);
    CHECK(prop.unifiedAddressing == 1);
    CHECK(prop.concurrentKernels == 1);
    CHECK(prop.canMapHostMemory == 1);
    CHECK(prop.pciDomainID == 0);
    CHECK(prop.pciBusID == 0);
    CHECK(prop.pciDeviceID == 6);
    size_t free = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
    CHECK(free == 149557477376ull);
    CHECK(total == 150109880320ull);
}

TEST_CASE("attributes carry the clock rate that CUDA 13 removed from cudaDeviceProp") {
    bring_up("h200");
    CHECK(static_cast<int>(cudaDevAttrClockRate) == 13);
    int value = 0;
    REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, 0) == cudaSuccess);
    CHECK(value == 1980000);
    REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
    CHECK(value == 132);
    REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
    CHECK(value == 9);
    CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrClockRate, 1) == cudaErrorInvalidDevice);
}

TEST_CASE("an invalid device leaves the current device unchanged") {
    bring_up("hgx-h200-8");
    REQUIRE(cudaSetDevice(3) == cudaSuccess);
    CHECK(cudaSetDevice(8) == cudaErrorInvalidDevice);
    CHECK(cudaSetDevice(-1) == cudaErrorInvalidDevice);
    int device = -1;
    REQUIRE(cudaGetDevice(&device) == cudaSuccess);
    CHECK(device == 3);
}

TEST_CASE("the last error persists through successes until cudaGetLastError reads it") {
    bring_up("h200");
    CHECK(cudaSetDevice(7) == cudaErrorInvalidDevice);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("error names and messages are CUDA's") {
    bring_up("h200");
    CHECK(std::strcmp(cudaGetErrorName(cudaErrorPeerAccessUnsupported), "cudaErrorPeerAccessUnsupported") == 0);
    CHECK(std::strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress") == 0);
    CHECK(std::strcmp(cudaGetErrorString(cudaSuccess), "no error") == 0);
    CHECK(std::strcmp(cudaGetErrorString(cudaErrorIllegalAddress), "an illegal memory access was encountered") == 0);
    CHECK(std::strcmp(cudaGetErrorString(cudaErrorInvalidDevice), "invalid device ordinal") == 0);
}

TEST_CASE("versions are CUDA 13.0") {
    bring_up("h200");
    int version = 0;
    REQUIRE(cudaRuntimeGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
    REQUIRE(cudaDriverGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
}

TEST_CASE("without a driver the count is 35 and left unwritten, the runtime version still answers") {
    bring_up("none");
    int count = -7;
    CHECK(cudaGetDeviceCount(&count) == cudaErrorInsufficientDriver);
    CHECK(count == -7);
    int version = 0;
    CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 16) == cudaErrorInsufficientDriver);
}

TEST_CASE("CUDA_VISIBLE_DEVICES: empty hides every device, a list narrows and reorders") {
    mgpu::sim::Options options;
    options.topology = "mixed-3";
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    mgpu::sim::reset_machine(options);
    int count = -1;
    CHECK(cudaGetDeviceCount(&count) == cudaErrorNoDevice);
    setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
    mgpu::sim::reset_machine(options);
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(count == 2);
    cudaDeviceProp prop;
    REQUIRE(cudaGetDeviceProperties(&prop, 1) == cudaSuccess);
    CHECK(std::strcmp(prop.name, "NVIDIA H200") == 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

TEST_CASE("a lost device answers 46") {
    mgpu::sim::Faults faults;
    faults.lost_device = 1;
    bring_up("hgx-h200-8", "eager", faults);
    CHECK(cudaSetDevice(1) == cudaErrorDevicesUnavailable);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 1) == cudaErrorDevicesUnavailable);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaSuccess);   // device 0 is fine
    CHECK(cudaFree(p) == cudaSuccess);
}
