// CUDA C++'s device language for host compilation: what a .cu file can use inside and around
// its kernels when it is compiled with g++ for the simulator. cu2cpp puts
// `#include <mgpu/sim/device_language.h>` first in every file it rewrites, as nvcc puts
// cuda_runtime.h first in every .cu file.
//
// What each qualifier becomes here:
//   __global__, __device__, __host__, __constant__, __managed__  nothing: every function is an
//       ordinary host one. cu2cpp rewrites __device__ and __constant__ variables at namespace
//       scope into one copy per device (device_symbol.h).
//   __shared__  static. A static variable is shared by every thread of every block of every
//       grid, and that is exactly one block's shared memory here: the blocks of a grid run one
//       after another and grids never overlap, so no two blocks use it at the same time.
//       (cu2cpp turns `extern __shared__ T name[];` into a pointer to the dynamic shared memory.)
//   __forceinline__, __launch_bounds__, __align__  the matching GCC attributes, or nothing.
//   __noinline__  rewritten by cu2cpp in the .cu file itself: as a macro here it would break the
//       standard library's own `__attribute__((__noinline__))`.
// __CUDACC__ and nvcc's other macros come from mgpu/sim/nvcc_predefined.h, which cu2cpp includes
// in .cu files only: a plain .cpp that includes cuda_runtime.h gets the qualifiers but not them.
#pragma once

#define MGPU_SIMULATOR 1

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ static
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

#include <cstdio>    // device printf is printf
#include <cstdlib>

#include "mgpu/sim/block_execution.h"
#include "mgpu/sim/device_atomics.h"
#include "mgpu/sim/device_intrinsics.h"
#include "mgpu/sim/device_symbol.h"
#include "mgpu/sim/device_sync.h"
#include "mgpu/sim/kernel_launch.h"
#include "mgpu/sim/types.h"

// nvcc includes cuda_runtime.h in every .cu file, so student code may use the runtime API
// without including it.
#if __has_include(<cuda_runtime.h>)
#include <cuda_runtime.h>
#endif

inline constexpr int warpSize = 32;
