// cuda-facts.md, "Device properties (one H200)": every listed property, on the one-GPU preset
// and on each device of the 8-GPU preset.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

void check_h200_properties(int device) {
    CAPTURE(device);
    cudaDeviceProp p{};
    REQUIRE(cudaGetDeviceProperties(&p, device) == cudaSuccess);
    CHECK(std::string(p.name) == "NVIDIA H200");
    CHECK(p.totalGlobalMem == 150109880320ull);
    CHECK(p.multiProcessorCount == 132);
    CHECK(p.major == 9);
    CHECK(p.minor == 0);
    CHECK(p.warpSize == 32);
    CHECK(p.maxThreadsPerBlock == 1024);
    CHECK(p.maxThreadsDim[0] == 1024);
    CHECK(p.maxThreadsDim[1] == 1024);
    CHECK(p.maxThreadsDim[2] == 64);
    CHECK(p.maxGridSize[0] == 2147483647);
    CHECK(p.maxGridSize[1] == 65535);
    CHECK(p.maxGridSize[2] == 65535);
    CHECK(p.sharedMemPerBlock == 49152);
    CHECK(p.sharedMemPerBlockOptin == 232448);
    CHECK(p.l2CacheSize == 62914560);
    CHECK(p.memoryBusWidth == 6016);
    CHECK(p.asyncEngineCount == 3);
    CHECK(p.unifiedAddressing == 1);
    CHECK(p.concurrentKernels == 1);
    CHECK(p.canMapHostMemory == 1);

    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) == cudaSuccess);
    CHECK(clock_khz == 1980000);
    int sm_count = 0;
    CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device) == cudaSuccess);
    CHECK(sm_count == 132);
    int major = 0;
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess);
    CHECK(major == 9);
}

// CUDA 13 removed these members; code that reads them must not compile.
template <typename T>
concept HasClockRate = requires(T p) { p.clockRate; };
template <typename T>
concept HasMemoryClockRate = requires(T p) { p.memoryClockRate; };
template <typename T>
concept HasDeviceOverlap = requires(T p) { p.deviceOverlap; };

}  // namespace

TEST_CASE("one H200 has the measured device properties") {
    use_machine("h200");
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    REQUIRE(count == 1);
    check_h200_properties(0);
    cudaDeviceProp p{};
    REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
    CHECK(p.pciDomainID == 0);
    CHECK(p.pciBusID == 0);
    CHECK(p.pciDeviceID == 6);
}

TEST_CASE("every device of the 8 x H200 machine has the H200 properties and its own PCI address") {
    use_machine("hgx-h200-8");
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    REQUIRE(count == 8);
    std::set<std::pair<int, std::pair<int, int>>> addresses;
    for (int d = 0; d < count; ++d) {
        check_h200_properties(d);
        cudaDeviceProp p{};
        REQUIRE(cudaGetDeviceProperties(&p, d) == cudaSuccess);
        addresses.insert({p.pciDomainID, {p.pciBusID, p.pciDeviceID}});
    }
    CHECK(addresses.size() == 8);
}

TEST_CASE("the presets have the device counts their names promise") {
    const std::pair<const char*, int> presets[] = {
        {"h200", 1}, {"hgx-h200-8", 8}, {"islands-2x2", 4}, {"pcie-4", 4}, {"mixed-3", 3}};
    for (const auto& [preset, expected] : presets) {
        CAPTURE(preset);
        if (!conformance::use_machine_if_hostable(preset)) continue;
        int count = -1;
        CHECK(cudaGetDeviceCount(&count) == cudaSuccess);
        CHECK(count == expected);
    }
}

TEST_CASE("cudaGetDeviceProperties of a device that does not exist returns 101") {
    use_machine("h200");
    cudaDeviceProp p{};
    CHECK(cudaGetDeviceProperties(&p, 1) == cudaErrorInvalidDevice);
    CHECK(cudaGetDeviceProperties(&p, -1) == cudaErrorInvalidDevice);
}

TEST_CASE("CUDA 13 removed clockRate, memoryClockRate and deviceOverlap from cudaDeviceProp") {
    CHECK_FALSE(HasClockRate<cudaDeviceProp>);
    CHECK_FALSE(HasMemoryClockRate<cudaDeviceProp>);
    CHECK_FALSE(HasDeviceOverlap<cudaDeviceProp>);
}

TEST_CASE("cudaGetDeviceProperties of the mixed machine reports what its description says") {
    use_machine("mixed-3");
    const auto& spec = mgpu::sim::machine();
    REQUIRE(spec.devices.size() == 3);
    std::set<std::string> kinds;
    for (int d = 0; d < 3; ++d) {
        CAPTURE(d);
        cudaDeviceProp p{};
        REQUIRE(cudaGetDeviceProperties(&p, d) == cudaSuccess);
        CHECK(std::string(p.name) == spec.devices[d].name);
        CHECK(p.totalGlobalMem == spec.devices[d].total_mem);
        CHECK(p.multiProcessorCount == spec.devices[d].sm_count);
        CHECK(p.major == spec.devices[d].major);
        CHECK(p.minor == spec.devices[d].minor);
        kinds.insert(std::string(p.name) + "/" + std::to_string(p.totalGlobalMem) + "/" +
                     std::to_string(p.multiProcessorCount) + "/" + std::to_string(p.major));
    }
    // A mixed machine is there to teach device selection: its devices must differ.
    CHECK(kinds.size() >= 2);
}
