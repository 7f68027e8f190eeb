// The measured H200 profile, copied from shared/reference/cuda-facts.md ("Device properties"
// and "Speeds") so that the tests compare the simulator against the measurement, not itself.
#pragma once

#include <cstddef>

namespace h200_facts {

inline constexpr const char* kName = "NVIDIA H200";
inline constexpr std::size_t kTotalGlobalMem = 150109880320ull;
inline constexpr std::size_t kFreeAtStart = 149557477376ull;   // cudaMemGetInfo free
inline constexpr int kMultiProcessorCount = 132;
inline constexpr int kMajor = 9, kMinor = 0;
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxThreadsDim[3] = {1024, 1024, 64};
inline constexpr int kMaxGridSize[3] = {2147483647, 65535, 65535};
inline constexpr std::size_t kSharedMemPerBlock = 49152;
inline constexpr std::size_t kSharedMemPerBlockOptin = 232448;
inline constexpr int kL2CacheSize = 62914560;
inline constexpr int kMemoryBusWidth = 6016;
inline constexpr int kAsyncEngineCount = 3;
inline constexpr int kPciDomainId = 0, kPciBusId = 0, kPciDeviceId = 6;
inline constexpr int kClockRateKhz = 1980000;   // cudaDevAttrClockRate

// Speeds table.
inline constexpr double kH2dPinnedGbps = 55.3, kH2dPageableGbps = 7.1;
inline constexpr double kD2hPinnedGbps = 55.2, kD2hPageableGbps = 11.0;
// The preset's pageable device-to-host speed: five H200 calibration runs measured 10.5-14.9 GB/s
// (bench/results/h200-calibration.md); 12.0 is inside all of them and within 10% of the 11.0 above.
inline constexpr double kD2hPageablePresetGbps = 12.0;
inline constexpr double kD2dCopyGbps = 2134.0;
inline constexpr double kMemoryBoundKernelGbps = 2740.0;   // 2.74 TB/s
inline constexpr double kLaunchPlusTinyKernelUs = 4.4;
inline constexpr double kNvlinkP2pLowGbps = 371.0, kNvlinkP2pHighGbps = 377.0;
inline constexpr double kPeerWithoutP2pGbps = 37.0;

}  // namespace h200_facts
