// The scene the stream tests share: a long kernel (see kLongKernelCount) and a long
// pinned copy (about 1.2 ms) to queue first, a tiny kernel to queue after them, and lookups of
// the resulting operations in the trace. Device-side timings are read from trace().ops, host
// ones from host_now_us().
#pragma once

#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

namespace conformance {

// 4 M floats: a memory-bound kernel of about 12 us of modelled time, far longer than a call's cost.
// A real H200 also runs it in about 12 us, which is no longer than a call traced by CUPTI; there the
// kernel gets 64 M floats (about 190 us).
inline constexpr std::size_t kLongKernelCount = (kRealGpu ? std::size_t{64} : std::size_t{4}) << 20;
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
        if (kRealGpu) warm_up();
    }

    // Every kind of call the stream cases time, once. The long buffer and the copy buffers keep their
    // contents; the tiny kernel writes its usual 2.5.
    void warm_up() {
        cudaStream_t stream = nullptr;
        REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
        std::vector<unsigned char> pageable(4096, 0x3f);
        scale_in_place<<<blocks_for(kLongKernelCount), kBlock, 0, stream>>>(device_long, 1.0f, kLongKernelCount);
        write_one<<<1, 1, 0, stream>>>(device_small, 2.5f);
        REQUIRE(cudaMemcpyAsync(device_copy, pinned, 4096, cudaMemcpyHostToDevice, stream) == cudaSuccess);
        REQUIRE(cudaMemcpyAsync(pinned, device_copy, 4096, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
        REQUIRE(cudaMemcpyAsync(device_copy, pageable.data(), 4096, cudaMemcpyHostToDevice, stream) == cudaSuccess);
        REQUIRE(cudaMemcpyAsync(pageable.data(), device_copy, 4096, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        REQUIRE(cudaStreamQuery(stream) == cudaSuccess);
        REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
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
