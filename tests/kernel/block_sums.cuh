// A block reduction with a __syncthreads after every step: out[b] is the sum of block b's
// elements of `in` (elements past n count as 0). Shared by the kernel tests that run it through
// the stand-in for the runtime and through the real runtime.
#pragma once

constexpr unsigned kSumThreads = 256;

__global__ void block_sums(const int* in, long long* out, unsigned n) {
    __shared__ long long partial[kSumThreads];
    const unsigned t = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}
