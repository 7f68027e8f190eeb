// What the bench programs built with nvcc and through the simulator share: stopping at the first
// failing CUDA call, and the median of repeated timings.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                           \
    do {                                                                                      \
        cudaError_t err_ = (call);                                                            \
        if (err_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,         \
                         cudaGetErrorString(err_));                                           \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

// The middle one of `times` (the upper middle for an even count).
inline float median(std::vector<float> times) {
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}
