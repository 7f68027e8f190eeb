// The macros nvcc 13.0 predefines in the host compilation of every .cu file. cu2cpp includes
// this first in each file it rewrites, so `#ifdef __CUDACC__` is true in .cu files and false in a
// plain .cpp that includes cuda_runtime.h, as it is with nvcc and the host compiler. No
// __CUDA_ARCH__: the simulator compiles kernels as host code, as nvcc's host pass sees them.
#pragma once

#define __CUDACC__ 1
#define __NVCC__ 1
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 88
