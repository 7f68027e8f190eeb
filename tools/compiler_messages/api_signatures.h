// The CUDA and NCCL functions the simulator declares, with their signatures as CUDA's headers
// declare them (without the hidden call-site parameter), in the form g++ prints a function:
// `cudaError_t cudaSetDevice(int)`. Read from the simulator's own headers, so they cannot drift.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace mgpu::messages {

// Function name -> signature, for every declaration in the headers of `folder` that ends with the
// call-site parameter, and for the device functions (__syncthreads, ...) of its mgpu/sim/device_*.h.
std::map<std::string, std::string> api_signatures(const std::filesystem::path& folder);

}  // namespace mgpu::messages
