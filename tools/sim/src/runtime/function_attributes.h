// What the simulator says about a kernel's resources and how many of its blocks fit on a
// multiprocessor: cudaFuncGetAttributes and the occupancy calculator.
//
// The simulator never compiles a kernel for the GPU, so it cannot count the registers or the local
// memory nvcc would give it, nor see static __shared__ arrays (they are host statics here). It
// answers for the kernels samples and lessons launch, which are small: kModelRegistersPerThread
// registers (what nvcc 13.0 gave saxpy, a block reduction and a polling loop for sm_90; an empty
// kernel got 4, a grid-stride loop over size_t 14), no local or static shared memory, 1024 threads
// per block (a __launch_bounds__ is not seen), code built for the device's own architecture. A
// pointer that is not a kernel is taken for one (the real runtime answers 400 for a host function). The occupancy follows the hardware's
// limits with those numbers: resident warps, blocks per multiprocessor, registers (allocated per
// warp in units of 256) and shared memory (the dynamic size plus the 1 KiB the runtime reserves
// per block, out of sharedMemPerMultiprocessor).
#pragma once

#include <cstddef>

#include "mgpu/sim/api_types.h"
#include "mgpu/sim/machine.h"

namespace mgpu::sim::rt {

inline constexpr int kModelRegistersPerThread = 10;

// max_dynamic_shared: the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (48 KiB unless raised).
cudaFuncAttributes model_function_attributes(const DeviceSpec& device, int max_dynamic_shared);

// Resident blocks of `block_size` threads, each with `dynamic_shared` bytes, on one multiprocessor.
int resident_blocks_per_sm(const DeviceSpec& device, const cudaFuncAttributes& function, int block_size,
                           std::size_t dynamic_shared);

}  // namespace mgpu::sim::rt
