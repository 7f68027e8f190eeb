// Warp-level primitives (CUDA C++ Programming Guide, "Warp Shuffle Functions", "Warp Vote
// Functions", "Warp Match Functions", "Warp Reduce Functions"), in the ways programs use them:
// warp and block reductions, broadcasts, scans, ballot counting. The expected values are the
// closed forms of the sums (0 + 1 + ... + 31 = 496) and the lane arithmetic the guide defines.
#include <doctest/doctest.h>

#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

constexpr unsigned kFull = 0xffffffffu;

__device__ int warp_sum(int value) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) value += __shfl_down_sync(kFull, value, offset);
    return value;
}

// One int per thread: lane results written by every thread.
__global__ void lane_results(int* reduced, int* broadcast, int* scan, int* butterfly, int* segment) {
    const int lane = static_cast<int>(threadIdx.x % warpSize);
    const int warp = static_cast<int>(threadIdx.x / warpSize);
    const int value = lane;
    const int sum = warp_sum(value);
    reduced[threadIdx.x] = sum;   // meaningful in lane 0
    broadcast[threadIdx.x] = __shfl_sync(kFull, 100 * warp + lane, 0);
    int inclusive = value;
    for (int offset = 1; offset < warpSize; offset *= 2) {
        const int before = __shfl_up_sync(kFull, inclusive, offset);
        if (lane >= offset) inclusive += before;
    }
    scan[threadIdx.x] = inclusive;
    int total = value;
    for (int mask = 16; mask > 0; mask /= 2) total += __shfl_xor_sync(kFull, total, mask);
    butterfly[threadIdx.x] = total;
    segment[threadIdx.x] = __shfl_sync(kFull, lane, 0, 8);
}

// Sum of `in` over the block: per-warp shuffles, the warps' sums through shared memory, then the
// first warp reduces those.
__global__ void block_sum(const int* in, int* out) {
    __shared__ int warp_sums[32];
    const unsigned lane = threadIdx.x % warpSize;
    const unsigned warp = threadIdx.x / warpSize;
    const int sum = warp_sum(in[blockIdx.x * blockDim.x + threadIdx.x]);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        const int partial = lane < blockDim.x / warpSize ? warp_sums[lane] : 0;
        const int total = warp_sum(partial);
        if (lane == 0) out[blockIdx.x] = total;
    }
}

__global__ void votes(const int* in, int* even_count, int* any_negative, int* all_small, unsigned* active) {
    const int value = in[threadIdx.x];
    const unsigned even = __ballot_sync(kFull, value % 2 == 0);
    const int negative = __any_sync(kFull, value < 0);
    const int small = __all_sync(kFull, value < 1000);
    const unsigned lanes = __activemask();   // before the branch below, where only lane 0 is active
    if (threadIdx.x % warpSize == 0) {
        atomicAdd(even_count, __popc(even));
        atomicAdd(any_negative, negative);
        atomicAdd(all_small, small);
        active[threadIdx.x / warpSize] = lanes;
    }
}

__global__ void half_warp_exchange(int* out) {
    const int lane = static_cast<int>(threadIdx.x);
    if (lane < 16) out[lane] = __shfl_xor_sync(0x0000ffffu, lane, 1);
    else out[lane] = -1;
}

__global__ void match_and_reduce(unsigned* groups, int* all_same, unsigned* sums, unsigned* maxima, int* minima) {
    const unsigned lane = threadIdx.x % warpSize;
    groups[lane] = __match_any_sync(kFull, lane / 4);
    int predicate = -1;
    const unsigned same = __match_all_sync(kFull, 42, &predicate);
    sums[lane] = __reduce_add_sync(kFull, lane);
    maxima[lane] = __reduce_max_sync(kFull, lane * 3u);
    minima[lane] = __reduce_min_sync(kFull, static_cast<int>(lane) - 5);
    if (lane == 0) *all_same = same == kFull && predicate == 1 ? 1 : 0;
}

__global__ void publish_through_shared(int* out) {
    __shared__ int value_of_lane_zero[2];
    const unsigned warp = threadIdx.x / warpSize;
    if (threadIdx.x % warpSize == 0) value_of_lane_zero[warp] = 1000 + static_cast<int>(warp);
    __syncwarp();
    out[threadIdx.x] = value_of_lane_zero[warp];
}

template <class T>
std::vector<T> device_to_host(const T* device, std::size_t count) {
    std::vector<T> host(count);
    REQUIRE(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
}

template <class T>
T* zeroed(std::size_t count) {
    T* p = nullptr;
    REQUIRE(cudaMalloc(&p, count * sizeof(T)) == cudaSuccess);
    REQUIRE(cudaMemset(p, 0, count * sizeof(T)) == cudaSuccess);
    return p;
}

}  // namespace

TEST_CASE("shuffles: warp reduction, broadcast from lane 0, scan, butterfly and segments") {
    use_machine("h200");
    constexpr unsigned kThreads = 64;
    int* reduced = zeroed<int>(kThreads);
    int* broadcast = zeroed<int>(kThreads);
    int* scan = zeroed<int>(kThreads);
    int* butterfly = zeroed<int>(kThreads);
    int* segment = zeroed<int>(kThreads);
    lane_results<<<1, kThreads>>>(reduced, broadcast, scan, butterfly, segment);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto sums = device_to_host(reduced, kThreads);
    CHECK(sums[0] == 496);    // 0 + 1 + ... + 31
    CHECK(sums[32] == 496);
    const auto broadcasts = device_to_host(broadcast, kThreads);
    const auto scans = device_to_host(scan, kThreads);
    const auto butterflies = device_to_host(butterfly, kThreads);
    const auto segments = device_to_host(segment, kThreads);
    for (unsigned t = 0; t < kThreads; ++t) {
        const int lane = static_cast<int>(t % 32);
        CHECK(broadcasts[t] == 100 * static_cast<int>(t / 32));
        CHECK(scans[t] == lane * (lane + 1) / 2);
        CHECK(butterflies[t] == 496);
        CHECK(segments[t] == lane / 8 * 8);
    }
    for (int* p : {reduced, broadcast, scan, butterfly, segment}) REQUIRE(cudaFree(p) == cudaSuccess);
}

TEST_CASE("a block reduction through shared memory and warp shuffles") {
    use_machine("h200");
    constexpr unsigned kBlocks = 3, kThreads = 256;
    std::vector<int> in(kBlocks * kThreads);
    for (unsigned i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i % kThreads);
    int* d_in = nullptr;
    REQUIRE(cudaMalloc(&d_in, in.size() * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
    int* d_out = zeroed<int>(kBlocks);
    block_sum<<<kBlocks, kThreads>>>(d_in, d_out);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(device_to_host(d_out, kBlocks) == std::vector<int>{32640, 32640, 32640});   // 0 + ... + 255
    REQUIRE(cudaFree(d_in) == cudaSuccess);
    REQUIRE(cudaFree(d_out) == cudaSuccess);
}

TEST_CASE("votes: ballot counting, any, all, and the active mask of a partial warp") {
    use_machine("h200");
    constexpr unsigned kThreads = 40;   // a full warp and one of 8 lanes
    std::vector<int> in(kThreads);
    for (unsigned i = 0; i < kThreads; ++i) in[i] = static_cast<int>(3 * i + 1);   // even for odd i
    in[35] = -2;
    int* d_in = nullptr;
    REQUIRE(cudaMalloc(&d_in, kThreads * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemcpy(d_in, in.data(), kThreads * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
    int* counts = zeroed<int>(3);
    unsigned* active = zeroed<unsigned>(2);
    votes<<<1, kThreads>>>(d_in, counts, counts + 1, counts + 2, active);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto results = device_to_host(counts, 3);
    CHECK(results[0] == 20);   // i = 1, 3, ..., 39 give even values (in[35] = -2 is even too)
    CHECK(results[1] == 1);    // only the second warp holds a negative value
    CHECK(results[2] == 2);    // every value is below 1000 in both warps
    CHECK(device_to_host(active, 2) == std::vector<unsigned>{0xffffffffu, 0xffu});
    REQUIRE(cudaFree(d_in) == cudaSuccess);
    REQUIRE(cudaFree(counts) == cudaSuccess);
    REQUIRE(cudaFree(active) == cudaSuccess);
}

TEST_CASE("a mask of half the warp: only the lanes it names take part") {
    use_machine("h200");
    int* out = zeroed<int>(32);
    half_warp_exchange<<<1, 32>>>(out);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto values = device_to_host(out, 32);
    for (int lane = 0; lane < 32; ++lane) CHECK(values[lane] == (lane < 16 ? (lane ^ 1) : -1));
    REQUIRE(cudaFree(out) == cudaSuccess);
}

TEST_CASE("match and reduce: groups of equal values, and sums, maxima and minima over the warp") {
    use_machine("h200");
    unsigned* groups = zeroed<unsigned>(32);
    int* all_same = zeroed<int>(1);
    unsigned* sums = zeroed<unsigned>(32);
    unsigned* maxima = zeroed<unsigned>(32);
    int* minima = zeroed<int>(32);
    match_and_reduce<<<1, 32>>>(groups, all_same, sums, maxima, minima);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto group_masks = device_to_host(groups, 32);
    const auto sum_values = device_to_host(sums, 32);
    const auto max_values = device_to_host(maxima, 32);
    const auto min_values = device_to_host(minima, 32);
    for (unsigned lane = 0; lane < 32; ++lane) {
        CHECK(group_masks[lane] == 0xFu << (lane / 4 * 4));
        CHECK(sum_values[lane] == 496u);
        CHECK(max_values[lane] == 93u);   // 31 * 3
        CHECK(min_values[lane] == -5);
    }
    CHECK(device_to_host(all_same, 1)[0] == 1);
    for (void* p : {static_cast<void*>(groups), static_cast<void*>(all_same), static_cast<void*>(sums),
                    static_cast<void*>(maxima), static_cast<void*>(minima)})
        REQUIRE(cudaFree(p) == cudaSuccess);
}

TEST_CASE("__syncwarp orders lane 0's shared-memory write before the other lanes read it") {
    use_machine("h200");
    int* out = zeroed<int>(64);
    publish_through_shared<<<1, 64>>>(out);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto values = device_to_host(out, 64);
    for (unsigned t = 0; t < 64; ++t) CHECK(values[t] == 1000 + static_cast<int>(t / 32));
    REQUIRE(cudaFree(out) == cudaSuccess);
}
