// One GPU's share of multi-gpu-sum: its slice of the input, its buffers and its stream.
#pragma once

#include <cstddef>

constexpr int kMaxGpus = 32;
constexpr int kBlocks = 32;
constexpr int kThreads = 256;

struct GpuPlan {
    std::size_t count;          // elements of this GPU's slice
    float* host_input;          // the slice, inside the pinned input
    float* host_partials;       // kBlocks partial sums, pinned
    float* device_input;
    float* device_partials;
    cudaStream_t stream;
    double sum;                 // the partial sums added on the host
};
