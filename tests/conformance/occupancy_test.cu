// cudaFuncGetAttributes and the occupancy calculator on an H200 (compute capability 9.0: 2048
// threads, 32 blocks, 64 Ki registers and 228 KiB of shared memory per multiprocessor, 1 KiB of it
// reserved per block), for the small kernels programs size their launches for, as
// p2pBandwidthLatencyTest sizes its copy kernel with cudaOccupancyMaxPotentialBlockSize. Every
// expected value is what an H200 answered (bench/h200/runtime_surface_probe.cu).
#include <doctest/doctest.h>

#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

// A grid-stride copy of 16-byte elements, as cuda-samples' SM-initiated peer copy is written.
__global__ void copy_int4(int4* __restrict__ dest, const int4* __restrict__ src, size_t count) {
    const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) dest[i] = src[i];
}

// A block reduction through dynamic shared memory of one float per thread.
__global__ void block_sums(const float* in, float* out, int n) {
    extern __shared__ float partial[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

// block_sums' dynamic shared memory for a block of `threads` threads.
size_t one_float_per_thread(int threads) { return static_cast<size_t>(threads) * sizeof(float); }

TEST_CASE("cudaFuncGetAttributes: 1024 threads, no static shared or local memory, 48 KiB of dynamic shared memory") {
    use_machine("h200");
    cudaFuncAttributes attributes{};
    REQUIRE(cudaFuncGetAttributes(&attributes, copy_int4) == cudaSuccess);
    CHECK(attributes.maxThreadsPerBlock == 1024);
    CHECK(attributes.sharedSizeBytes == 0);
    CHECK(attributes.localSizeBytes == 0);
    CHECK(attributes.maxDynamicSharedSizeBytes == 49152);
    CHECK(attributes.binaryVersion == 90);   // built for sm_90
    CHECK(attributes.numRegs > 0);
    CHECK(attributes.numRegs <= 32);          // a copy loop needs few registers (14 for nvcc 13.0)

    REQUIRE(cudaFuncSetAttribute(block_sums, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000) == cudaSuccess);
    REQUIRE(cudaFuncGetAttributes(&attributes, block_sums) == cudaSuccess);
    CHECK(attributes.maxDynamicSharedSizeBytes == 100000);
}

TEST_CASE("resident blocks per multiprocessor follow the thread, block and shared memory limits") {
    use_machine("h200");
    const auto blocks = [](int block_size, size_t dynamic_shared) {
        int count = -1;
        REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, copy_int4, block_size, dynamic_shared) ==
                cudaSuccess);
        return count;
    };
    CHECK(blocks(1024, 0) == 2);     // 2048 threads
    CHECK(blocks(256, 0) == 8);
    CHECK(blocks(96, 0) == 21);      // 64 warps / 3 warps per block
    CHECK(blocks(64, 0) == 32);      // 32 blocks at most
    CHECK(blocks(32, 0) == 32);
    CHECK(blocks(256, 49152) == 4);  // (48 KiB + 1 KiB reserved) per block out of 228 KiB
    CHECK(blocks(128, 16384) == 13);  // (16 KiB + 1 KiB) per block: 13, fewer than the 16 of the thread limit
    CHECK(blocks(1025, 0) == 0);     // more threads than a block may have: none, and no error
    CHECK(blocks(32, 49153) == 0);   // more dynamic shared memory than the kernel may ask for
}

TEST_CASE("cudaOccupancyMaxPotentialBlockSize picks the largest block that fills a multiprocessor") {
    use_machine("h200");
    int min_grid = 0, block = 0;
    REQUIRE(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, copy_int4) == cudaSuccess);
    CHECK(block == 1024);
    CHECK(min_grid == 2 * 132);
    REQUIRE(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, copy_int4, 0, 128) == cudaSuccess);
    CHECK(block == 128);
    CHECK(min_grid == 16 * 132);
    REQUIRE(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&min_grid, &block, block_sums, one_float_per_thread) ==
            cudaSuccess);
    CHECK(block == 1024);
    CHECK(min_grid == 2 * 132);

    // The sizes it gives launch, and the copy is right.
    constexpr size_t kCount = 100000;
    int4* src = nullptr;
    int4* dst = nullptr;
    REQUIRE(cudaMalloc(&src, kCount * sizeof(int4)) == cudaSuccess);
    REQUIRE(cudaMalloc(&dst, kCount * sizeof(int4)) == cudaSuccess);
    std::vector<int4> values(kCount);
    for (size_t i = 0; i < kCount; ++i) values[i] = make_int4(int(i), int(i) + 1, int(i) + 2, int(i) + 3);
    REQUIRE(cudaMemcpy(src, values.data(), kCount * sizeof(int4), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, copy_int4) == cudaSuccess);
    copy_int4<<<min_grid, block>>>(dst, src, kCount);
    CHECK(cudaGetLastError() == cudaSuccess);
    std::vector<int4> got(kCount);
    REQUIRE(cudaMemcpy(got.data(), dst, kCount * sizeof(int4), cudaMemcpyDeviceToHost) == cudaSuccess);
    bool same = true;
    for (size_t i = 0; i < kCount; ++i) same = same && got[i].x == values[i].x && got[i].w == values[i].w;
    CHECK(same);
    CHECK(cudaFree(src) == cudaSuccess);
    CHECK(cudaFree(dst) == cudaSuccess);
}

TEST_CASE("the occupancy calls refuse a null kernel with 98 and a block of 0 threads with 1") {
    use_machine("h200");
    int count = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, copy_int4, 0, 0) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, static_cast<const void*>(nullptr), 128, 0) ==
          cudaErrorInvalidDeviceFunction);
    CHECK(cudaGetLastError() == cudaErrorInvalidDeviceFunction);
    cudaFuncAttributes attributes{};
    CHECK(cudaFuncGetAttributes(&attributes, static_cast<const void*>(nullptr)) == cudaErrorInvalidDeviceFunction);
    CHECK(cudaGetLastError() == cudaErrorInvalidDeviceFunction);
}
