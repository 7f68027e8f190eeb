// What cudaGetDeviceProperties and cudaDeviceGetAttribute report for a simulated device.
#pragma once

#include "mgpu/sim/api_types.h"
#include "mgpu/sim/machine.h"

namespace mgpu::sim::rt {

void fill_properties(const DeviceSpec& device, cudaDeviceProp& prop);

// false when `attr` is not an attribute of CUDA 13.
bool device_attribute(const DeviceSpec& device, int attr, int& value);

// cudaDeviceProp::memPitch: the largest pitch a pitched copy accepts.
inline constexpr long long kMaxMemoryPitch = 2147483647;

// Resident blocks per multiprocessor at most, by compute capability (cudaDevAttrMaxBlocksPerMultiprocessor).
int max_blocks_per_sm(const DeviceSpec& device);
// Shared memory the runtime keeps for itself in every block (cudaDevAttrReservedSharedMemoryPerBlock).
int reserved_shared_per_block(const DeviceSpec& device);

// Stream priorities of a compute capability 9.0 device: 0 is the lowest, -5 the highest.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

}  // namespace mgpu::sim::rt
