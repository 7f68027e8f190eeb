// What cudaGetDeviceProperties and cudaDeviceGetAttribute report for a simulated device.
#pragma once

#include "mgpu/sim/api_types.h"
#include "mgpu/sim/machine.h"

namespace mgpu::sim::rt {

void fill_properties(const DeviceSpec& device, cudaDeviceProp& prop);

// false when `attr` is not an attribute of CUDA 13.
bool device_attribute(const DeviceSpec& device, int attr, int& value);

// Stream priorities of a compute capability 9.0 device: 0 is the lowest, -5 the highest.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

}  // namespace mgpu::sim::rt
