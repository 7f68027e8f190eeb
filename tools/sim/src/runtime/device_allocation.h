// cudaMalloc's work, shared by the calls that allocate device memory (cudaMallocPitch, cudaMalloc3D):
// the context check, the injected allocation failure, the allocation and its modelled host time.
#pragma once

#include <cstddef>

#include "api_call.h"

namespace mgpu::sim::rt {

cudaError_t allocate_device(ApiCall& call, void** devPtr, std::size_t size);

}  // namespace mgpu::sim::rt
