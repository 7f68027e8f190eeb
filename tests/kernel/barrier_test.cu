// __syncthreads semantics: every thread of a block waits until all have arrived, writes made
// before a barrier are seen by every thread after it, and each block has its own shared memory.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "block_sums.cuh"
#include "launch_recorder.h"

namespace {

constexpr unsigned kThreads = 256;

// Each thread reads what its right-hand neighbour wrote before the barrier.
__global__ void rotate_through_shared(int* out) {
    __shared__ int slot[kThreads];
    const unsigned t = threadIdx.x;
    slot[t] = static_cast<int>(blockIdx.x * 1000 + t);
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = slot[(t + 1) % blockDim.x];
}

// The same through dynamic shared memory, reversed within the block.
__global__ void reverse_in_block(const float* in, float* out) {
    extern __shared__ float staging[];
    const unsigned t = threadIdx.x;
    const unsigned base = blockIdx.x * blockDim.x;
    staging[t] = in[base + t];
    __syncthreads();
    out[base + t] = staging[blockDim.x - 1 - t];
}

// Only the last thread of a block writes; every thread reads after the barrier. A barrier that
// let threads through early would show them the number the previous block left there.
__global__ void last_thread_publishes(int* seen) {
    __shared__ int owner;
    if (threadIdx.x == blockDim.x - 1) owner = static_cast<int>(blockIdx.x);
    __syncthreads();
    seen[blockIdx.x * blockDim.x + threadIdx.x] = owner;
}

__global__ void barrier_votes(const int* flags, int* counts, int* all, int* any) {
    const int flag = flags[blockIdx.x * blockDim.x + threadIdx.x];
    const int count = __syncthreads_count(flag);
    const int every = __syncthreads_and(flag);
    const int some = __syncthreads_or(flag);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = count;
        all[blockIdx.x] = every;
        any[blockIdx.x] = some;
    }
}

}  // namespace

TEST_CASE("a block reduction with several __syncthreads gives the exact sum of every block") {
    const unsigned n = kSumThreads * 37 + 101;   // the last block is partly empty
    const unsigned blocks = (n + kSumThreads - 1) / kSumThreads;
    std::mt19937 random(20240611);
    std::uniform_int_distribution<int> value(-1000000, 1000000);
    std::vector<int> in(n);
    for (int& x : in) x = value(random);
    std::vector<long long> expected(blocks, 0);
    for (unsigned i = 0; i < n; ++i) expected[i / kSumThreads] += in[i];

    std::vector<long long> out(blocks, 0);
    block_sums<<<blocks, kSumThreads>>>(in.data(), out.data(), n);
    REQUIRE_FALSE(kernel_test::last_fault());
    CHECK(out == expected);
}

TEST_CASE("writes before a barrier are visible to every thread of the block after it") {
    const unsigned blocks = 3;
    std::vector<int> out(blocks * kThreads, -7);
    rotate_through_shared<<<blocks, kThreads>>>(out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < kThreads; ++t)
            CHECK(out[b * kThreads + t] == static_cast<int>(b * 1000 + (t + 1) % kThreads));
}

TEST_CASE("dynamic shared memory is shared by the threads of a block") {
    const unsigned blocks = 4, threads = 128;
    std::vector<float> in(blocks * threads), out(blocks * threads, 0.0f);
    for (unsigned i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i) + 1.0f;
    reverse_in_block<<<blocks, threads, threads * sizeof(float)>>>(in.data(), out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < threads; ++t) CHECK(out[b * threads + t] == in[b * threads + threads - 1 - t]);
}

TEST_CASE("after a barrier a block sees its own shared values, not those of the block before") {
    const unsigned blocks = 5, threads = 64;
    std::vector<int> seen(blocks * threads, 99);
    last_thread_publishes<<<blocks, threads>>>(seen.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned b = 0; b < blocks; ++b)
        for (unsigned t = 0; t < threads; ++t) CHECK(seen[b * threads + t] == static_cast<int>(b));
}

TEST_CASE("__syncthreads_count, _and and _or reduce a predicate over the block") {
    const unsigned blocks = 3, threads = 96;
    std::vector<int> flags(blocks * threads, 0);
    for (unsigned t = 0; t < threads; ++t) {
        flags[t] = t % 3 == 0;          // block 0: some threads
        flags[threads + t] = 1;         // block 1: every thread
        flags[2 * threads + t] = 0;     // block 2: none
    }
    std::vector<int> counts(blocks, -1), all(blocks, -1), any(blocks, -1);
    barrier_votes<<<blocks, threads>>>(flags.data(), counts.data(), all.data(), any.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    CHECK(counts == std::vector<int>{32, 96, 0});
    CHECK(all == std::vector<int>{0, 1, 0});
    CHECK(any == std::vector<int>{1, 1, 0});
}
