// Warp-level operations: shuffles, votes and __syncwarp, with the results the CUDA C++
// Programming Guide defines (computed here on the host from its definitions).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "launch_recorder.h"

namespace {

__global__ void warp_sums(const int* in, int* out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int value = in[i];
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % 32 == 0) out[i / 32] = value;
}

__global__ void shuffles(const float* in, float* broadcast, float* up, float* down, float* butterfly, float* segment) {
    const unsigned lane = threadIdx.x % 32;
    const float value = in[threadIdx.x];
    broadcast[threadIdx.x] = __shfl_sync(0xffffffffu, value, 3);
    up[threadIdx.x] = __shfl_up_sync(0xffffffffu, value, 2);
    down[threadIdx.x] = __shfl_down_sync(0xffffffffu, value, 5);
    butterfly[threadIdx.x] = __shfl_xor_sync(0xffffffffu, value, 1);
    segment[threadIdx.x] = __shfl_sync(0xffffffffu, value, lane + 1, 8);
}

__global__ void votes(unsigned* ballots, int* any, int* all) {
    const unsigned lane = threadIdx.x % 32;
    const unsigned ballot = __ballot_sync(0xffffffffu, lane % 3 == 0);
    const int some = __any_sync(0xffffffffu, lane == 31);
    const int every = __all_sync(0xffffffffu, lane < 40);
    if (lane == 0) {
        ballots[threadIdx.x / 32] = ballot;
        any[threadIdx.x / 32] = some;
        all[threadIdx.x / 32] = every;
    }
}

// Lane 0 writes a value for the whole warp; after __syncwarp every lane reads it.
__global__ void publish_in_warp(int* out) {
    __shared__ int per_warp[4];
    if (threadIdx.x % 32 == 0) per_warp[threadIdx.x / 32] = 7 * static_cast<int>(threadIdx.x / 32) + 1;
    __syncwarp();
    out[threadIdx.x] = per_warp[threadIdx.x / 32];
}

// Neighbours exchange values twice; a warp of one lane (the last of a 33-thread block) keeps its own.
__global__ void shift_twice(const int* in, int* out) {
    int value = in[threadIdx.x];
    value = __shfl_down_sync(0xffffffffu, value, 1);
    value = __shfl_down_sync(0xffffffffu, value, 1);
    out[threadIdx.x] = value;
}

// Lanes 20-31 return first; the Programming Guide asks only the non-exited lanes of a mask to
// take part, so the others go on without them.
__global__ void shift_after_early_return(int* out) {
    if (threadIdx.x >= 20) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, static_cast<int>(threadIdx.x) * 10, 1);
}

__global__ void match_and_sum(unsigned* groups, unsigned* sums) {
    const unsigned lane = threadIdx.x % 32;
    groups[threadIdx.x] = __match_any_sync(0xffffffffu, lane % 2);
    sums[threadIdx.x] = __reduce_add_sync(0xffffffffu, lane);
}

}  // namespace

TEST_CASE("a warp reduction with __shfl_down_sync gives each warp's sum") {
    const unsigned blocks = 3, threads = 128;
    std::vector<int> in(blocks * threads), out(blocks * threads / 32, 0);
    for (unsigned i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i * 7 % 101) - 50;
    warp_sums<<<blocks, threads>>>(in.data(), out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned w = 0; w < out.size(); ++w) {
        int expected = 0;
        for (unsigned l = 0; l < 32; ++l) expected += in[w * 32 + l];
        CHECK(out[w] == expected);
    }
}

TEST_CASE("shuffles read the lane the Programming Guide names, or keep their own value") {
    const unsigned threads = 64;
    std::vector<float> in(threads), broadcast(threads), up(threads), down(threads), butterfly(threads), segment(threads);
    for (unsigned i = 0; i < threads; ++i) in[i] = 1.5f * static_cast<float>(i) - 3.0f;
    shuffles<<<1, threads>>>(in.data(), broadcast.data(), up.data(), down.data(), butterfly.data(), segment.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned i = 0; i < threads; ++i) {
        const unsigned warp = i / 32 * 32, lane = i % 32;
        CHECK(broadcast[i] == in[warp + 3]);
        CHECK(up[i] == (lane >= 2 ? in[i - 2] : in[i]));
        CHECK(down[i] == (lane + 5 < 32 ? in[i + 5] : in[i]));
        CHECK(butterfly[i] == in[warp + (lane ^ 1)]);
        CHECK(segment[i] == in[warp + lane / 8 * 8 + (lane + 1) % 8]);
    }
}

TEST_CASE("ballot, any and all vote over the lanes of each warp, a partial last warp included") {
    const unsigned threads = 80;   // warps of 32, 32 and 16 lanes
    std::vector<unsigned> ballots(3, 1);
    std::vector<int> any(3, -1), all(3, -1);
    votes<<<1, threads>>>(ballots.data(), any.data(), all.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    unsigned every_third = 0, every_third_of_16 = 0;
    for (unsigned lane = 0; lane < 32; lane += 3) {
        every_third |= 1u << lane;
        if (lane < 16) every_third_of_16 |= 1u << lane;
    }
    CHECK(ballots == std::vector<unsigned>{every_third, every_third, every_third_of_16});
    CHECK(any == std::vector<int>{1, 1, 0});   // the last warp has no lane 31
    CHECK(all == std::vector<int>{1, 1, 1});
}

TEST_CASE("__syncwarp makes one lane's write visible to its warp") {
    std::vector<int> out(128, 0);
    publish_in_warp<<<1, 128>>>(out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned i = 0; i < 128; ++i) CHECK(out[i] == 7 * static_cast<int>(i / 32) + 1);
}

TEST_CASE("a warp of a single lane goes through its shuffles alone") {
    const unsigned threads = 33;
    std::vector<int> in(threads), out(threads, 0);
    for (unsigned i = 0; i < threads; ++i) in[i] = static_cast<int>(10 * i + 1);
    shift_twice<<<1, threads>>>(in.data(), out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned i = 0; i < 32; ++i) {
        // Lane l reads lane l+1's value of lane l+2 (both steps keep their own value past lane 31).
        const unsigned source = std::min(i + 2, 31u);
        CHECK(out[i] == in[source]);
    }
    CHECK(out[32] == in[32]);
}

TEST_CASE("lanes that returned are not waited for; reading one gives the reader's own value") {
    std::vector<int> out(32, -1);
    shift_after_early_return<<<1, 32>>>(out.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (int lane = 0; lane < 19; ++lane) CHECK(out[lane] == 10 * (lane + 1));
    CHECK(out[19] == 190);   // lane 20 has returned: undefined on a GPU, lane 19's own value here
    CHECK(out[20] == -1);
}

TEST_CASE("match and reduce across a warp and a partial warp") {
    std::vector<unsigned> groups(40, 0), sums(40, 0);
    match_and_sum<<<1, 40>>>(groups.data(), sums.data());
    REQUIRE_FALSE(kernel_test::last_fault());
    for (unsigned t = 0; t < 32; ++t) {
        CHECK(groups[t] == (t % 2 == 0 ? 0x55555555u : 0xAAAAAAAAu));
        CHECK(sums[t] == 496u);
    }
    for (unsigned t = 32; t < 40; ++t) {
        CHECK(groups[t] == (t % 2 == 0 ? 0x55u : 0xAAu));
        CHECK(sums[t] == 28u);   // lanes 0..7 of the partial warp
    }
}
