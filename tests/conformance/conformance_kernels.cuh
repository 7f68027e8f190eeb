// Kernels the conformance tests launch. Plain CUDA: each one is what a course program would
// write, and each result can be computed on the host independently.
#pragma once

#include <cstddef>

#include <cuda_runtime.h>

namespace conformance {

constexpr unsigned kBlock = 256;

inline unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

}  // namespace conformance

// The memory-bound kernel of cuda-facts.md: one float read and written per thread.
__global__ void scale_in_place(float* x, float a, std::size_t n) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] *= a;
}

// out[i] = in[i] * a + b; `in` and `out` may live on different devices.
__global__ void affine(const float* in, float* out, float a, float b, std::size_t n) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = in[i] * a + b;
}

// The smallest kernel there is: one thread writes one value.
__global__ void write_one(float* x, float value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) x[0] = value;
}

// Uses dynamic shared memory, so its launch can ask for more than a block may have.
__global__ void reverse_through_shared(const float* in, float* out, unsigned n) {
    extern __shared__ float staging[];
    const unsigned i = threadIdx.x;
    if (i < n) staging[i] = in[i];
    __syncthreads();
    if (i < n) out[i] = staging[n - 1 - i];
}

// A pointer handed to a kernel inside a struct, so only the memory access itself can reveal
// which device it points to.
struct WrappedInput {
    const float* values;
    std::size_t count;
};

__global__ void affine_wrapped(WrappedInput in, float* out, float a, float b) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < in.count) out[i] = in.values[i] * a + b;
}
