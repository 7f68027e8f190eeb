// The scene the stream tests share: a long kernel (about 12 us of modelled time) and a long
// pinned copy (about 1.2 ms) to queue first, a tiny kernel to queue after them, and lookups of
// the resulting operations in the trace. Device-side timings are read from trace().ops, host
// ones from host_now_us().
#pragma once

#include <cstring>

#include <doctest/doctest.h>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

namespace conformance {

// 4 M floats: a memory-bound kernel of about 12 us of modelled time, far longer than a call's cost.
inline constexpr std::size_t kLongKernelCount = std::size_t{4} << 20;
// 64 MiB: a pinned copy of about 1.2 ms of modelled time.
inline constexpr std::size_t kLongCopyBytes = std::size_t{64} << 20;

struct Buffers {
    float* device_long = nullptr;      // kLongKernelCount floats for the long kernel
    void* device_copy = nullptr;       // kLongCopyBytes
    void* pinned = nullptr;            // kLongCopyBytes, page-locked
    float* device_small = nullptr;     // 1 float for the tiny kernel

    Buffers() {
        REQUIRE(cudaMalloc(&device_long, kLongKernelCount * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMalloc(&device_copy, kLongCopyBytes) == cudaSuccess);
        REQUIRE(cudaMallocHost(&pinned, kLongCopyBytes) == cudaSuccess);
        REQUIRE(cudaMalloc(&device_small, sizeof(float)) == cudaSuccess);
        std::memset(pinned, 0x3f, kLongCopyBytes);
        REQUIRE(cudaMemset(device_long, 0x3f, kLongKernelCount * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMemset(device_copy, 0x3f, kLongCopyBytes) == cudaSuccess);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
    ~Buffers() {
        cudaFree(device_long);
        cudaFree(device_copy);
        cudaFreeHost(pinned);
        cudaFree(device_small);
    }
    Buffers(const Buffers&) = delete;
    Buffers& operator=(const Buffers&) = delete;

    void long_kernel(cudaStream_t stream) {
        scale_in_place<<<blocks_for(kLongKernelCount), kBlock, 0, stream>>>(device_long, 1.0001f, kLongKernelCount);
        REQUIRE(cudaGetLastError() == cudaSuccess);
    }
    void tiny_kernel(cudaStream_t stream) {
        write_one<<<1, 1, 0, stream>>>(device_small, 2.5f);
        REQUIRE(cudaGetLastError() == cudaSuccess);
    }
    void long_copy(cudaStream_t stream) {
        REQUIRE(cudaMemcpyAsync(device_copy, pinned, kLongCopyBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    }
};

inline mgpu::trace::DeviceOp only_op(mgpu::trace::OpKind kind) {
    const auto ops = conformance::ops_of_kind(kind);
    REQUIRE(ops.size() == 1);
    return ops.front();
}

inline cudaStream_t make_stream(unsigned flags) {
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, flags) == cudaSuccess);
    return stream;
}

}  // namespace conformance
