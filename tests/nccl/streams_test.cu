// NCCL work is queued on the stream it is given, on the communicator's device, and ordered with
// everything else on that stream under every schedule (lessons-1-2-4.md 3.5, 3.14 L4.f, L4.g):
// a producer kernel before the collective, a consumer after it, an event between streams, and
// independent work on another stream overlapping it on the modelled timeline.
#include <doctest/doctest.h>

#include "nccl_test_support.h"

using namespace nccl_tests;
using conformance::use_machine;

namespace {

constexpr int kThreads = 256;
constexpr std::size_t kCount = 4099;
const std::vector<std::string> kSchedules = {"eager", "lazy", "shuffle:1", "shuffle:2", "shuffle:3"};

__global__ void fill_with_rank(float* x, float rank, std::size_t n) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] = rank + 1.0f + static_cast<float>(i % 7);
}

__global__ void double_it(const float* x, float* y, std::size_t n) {
    const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

unsigned blocks() { return static_cast<unsigned>((kCount + kThreads - 1) / kThreads); }

// Sum over ranks of fill_with_rank's value, doubled.
float expected_at(std::size_t i, int n) {
    float sum = 0;
    for (int r = 0; r < n; ++r) sum += static_cast<float>(r) + 1.0f + static_cast<float>(i % 7);
    return 2.0f * sum;
}

struct Rank {
    float* x = nullptr;
    float* y = nullptr;
    cudaStream_t compute = nullptr;
    cudaStream_t communicate = nullptr;
    cudaEvent_t produced = nullptr;
};

// Produce on one stream, all-reduce (after an event wait, or not), consume on the collective's
// stream; returns the number of wrong elements over all ranks.
int run_pipeline(int n, bool same_stream, bool wait_for_producer) {
    Comms comms(n);
    std::vector<Rank> ranks(n);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaMalloc(&ranks[r].x, kCount * sizeof(float));
        cudaMalloc(&ranks[r].y, kCount * sizeof(float));
        cudaStreamCreate(&ranks[r].compute);
        cudaStreamCreate(&ranks[r].communicate);
        cudaEventCreate(&ranks[r].produced);
    }
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        Rank& rank = ranks[r];
        fill_with_rank<<<blocks(), kThreads, 0, rank.compute>>>(rank.x, static_cast<float>(r), kCount);
        cudaEventRecord(rank.produced, rank.compute);
        if (!same_stream && wait_for_producer) cudaStreamWaitEvent(rank.communicate, rank.produced, 0);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        cudaStream_t stream = same_stream ? ranks[r].compute : ranks[r].communicate;
        REQUIRE(ncclAllReduce(ranks[r].x, ranks[r].x, kCount, ncclFloat32, ncclSum, comms[r], stream) == ncclSuccess);
    }
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaStream_t stream = same_stream ? ranks[r].compute : ranks[r].communicate;
        double_it<<<blocks(), kThreads, 0, stream>>>(ranks[r].x, ranks[r].y, kCount);
    }
    int wrong = 0;
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        std::vector<float> y(kCount);
        cudaMemcpy(y.data(), ranks[r].y, kCount * sizeof(float), cudaMemcpyDeviceToHost);
        for (std::size_t i = 0; i < kCount; ++i) wrong += y[i] != expected_at(i, n);
        cudaFree(ranks[r].x);
        cudaFree(ranks[r].y);
        cudaStreamDestroy(ranks[r].compute);
        cudaStreamDestroy(ranks[r].communicate);
        cudaEventDestroy(ranks[r].produced);
    }
    cudaSetDevice(0);
    return wrong;
}

}  // namespace

TEST_CASE("producer, all-reduce and consumer on one stream per rank give the right result under every schedule") {
    for (const auto& schedule : kSchedules) {
        CAPTURE(schedule);
        use_machine("hgx-h200-8", schedule);
        CHECK(run_pipeline(4, true, false) == 0);
    }
}

TEST_CASE("an all-reduce on a second stream that waits for the producer's event is right under every schedule") {
    for (const auto& schedule : kSchedules) {
        CAPTURE(schedule);
        use_machine("islands-2x2", schedule);
        CHECK(run_pipeline(4, false, true) == 0);
    }
}

TEST_CASE("without the event wait the all-reduce may run before the producer: the lazy schedule shows it") {
    use_machine("hgx-h200-8", "lazy");
    CHECK(run_pipeline(4, false, false) > 0);
}

TEST_CASE("the timeline: every rank's part shares one start and end, after its producer; independent work overlaps") {
    use_machine("hgx-h200-8");
    const int n = 2;
    Comms comms(n);
    const std::size_t big = 16u << 20;   // 64 MiB per rank: long enough to see overlap
    std::vector<float*> data(n), other(n);
    std::vector<cudaStream_t> streams(n), side(n);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaMalloc(&data[r], big * sizeof(float));
        cudaMalloc(&other[r], kCount * sizeof(float));
        cudaStreamCreate(&streams[r]);
        cudaStreamCreate(&side[r]);
        fill_with_rank<<<blocks(), kThreads, 0, streams[r]>>>(data[r], static_cast<float>(r), kCount);
    }
    REQUIRE(ncclGroupStart() == ncclSuccess);
    for (int r = 0; r < n; ++r)
        REQUIRE(ncclAllReduce(data[r], data[r], big, ncclFloat32, ncclSum, comms[r], streams[r]) == ncclSuccess);
    REQUIRE(ncclGroupEnd() == ncclSuccess);
    cudaSetDevice(0);
    fill_with_rank<<<blocks(), kThreads, 0, side[0]>>>(other[0], 0.0f, kCount);
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaDeviceSynchronize();
    }
    const auto kernels = conformance::ops_of_kind(mgpu::trace::OpKind::Kernel);
    const auto parts = conformance::ops_of_kind(mgpu::trace::OpKind::Collective);
    REQUIRE(kernels.size() == 3);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].start_us == parts[1].start_us);
    CHECK(parts[0].end_us == parts[1].end_us);
    CHECK(parts[0].device != parts[1].device);
    CHECK(parts[0].start_us >= kernels[0].end_us);
    CHECK(parts[0].start_us >= kernels[1].end_us);
    CHECK(mgpu::trace::overlaps(parts[0], kernels[2]));
    for (int r = 0; r < n; ++r) {
        cudaSetDevice(r);
        cudaFree(data[r]);
        cudaFree(other[r]);
        cudaStreamDestroy(streams[r]);
        cudaStreamDestroy(side[r]);
    }
    cudaSetDevice(0);
}
