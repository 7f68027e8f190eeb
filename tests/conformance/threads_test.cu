// Host threads: the current device and the last error belong to the calling thread (cuda-facts.md,
// "Every failing call stores its code as the calling thread's last error"; the runtime guide: the
// current device is per host thread). Several threads driving their own devices at once must all
// get the right results.
#include <doctest/doctest.h>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::kBlock;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 200003;

// Allocates on the current device, copies random data in, scales it, copies it back and
// returns how many elements differ from the host's own computation.
int scale_and_count_mistakes(unsigned seed, float factor) {
    const auto input = conformance::random_floats(kCount, seed);
    float* device = nullptr;
    if (cudaMalloc(&device, kCount * sizeof(float)) != cudaSuccess) return -1;
    if (cudaMemcpy(device, input.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) return -1;
    cudaStream_t stream = nullptr;
    if (cudaStreamCreate(&stream) != cudaSuccess) return -1;
    scale_in_place<<<blocks_for(kCount), kBlock, 0, stream>>>(device, factor, kCount);
    if (cudaGetLastError() != cudaSuccess) return -1;
    if (cudaStreamSynchronize(stream) != cudaSuccess) return -1;
    std::vector<float> output(kCount, 0.0f);
    if (cudaMemcpy(output.data(), device, kCount * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return -1;
    if (cudaDeviceSynchronize() != cudaSuccess) return -1;
    if (cudaStreamDestroy(stream) != cudaSuccess) return -1;
    if (cudaFree(device) != cudaSuccess) return -1;
    int mistakes = 0;
    for (std::size_t i = 0; i < kCount; ++i)
        if (!(output[i] == doctest::Approx(input[i] * factor).epsilon(1e-6))) ++mistakes;
    return mistakes;
}

}  // namespace

TEST_CASE("several threads, each with its own current device, allocate, launch and synchronise concurrently with right results") {
    use_machine("hgx-h200-8");
    constexpr int kThreads = 8;
    std::vector<int> mistakes(kThreads, -2);
    std::vector<int> device_seen(kThreads, -1);
    std::barrier start_together(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            if (cudaSetDevice(t) != cudaSuccess) return;
            start_together.arrive_and_wait();
            mistakes[t] = scale_and_count_mistakes(100u + t, 1.0f + 0.25f * t);
            cudaGetDevice(&device_seen[t]);
        });
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
        CAPTURE(t);
        CHECK(mistakes[t] == 0);
        CHECK(device_seen[t] == t);
    }
    for (int d = 0; d < kThreads; ++d) CHECK(mgpu::sim::live_device_allocations(d) == 0);
}

TEST_CASE("several threads sharing one device allocate, launch and synchronise concurrently with right results") {
    use_machine("h200");
    constexpr int kThreads = 4;
    std::vector<int> mistakes(kThreads, -2);
    std::barrier start_together(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            start_together.arrive_and_wait();
            mistakes[t] = scale_and_count_mistakes(200u + t, 2.0f - 0.125f * t);
        });
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
        CAPTURE(t);
        CHECK(mistakes[t] == 0);
    }
}

TEST_CASE("cudaSetDevice in one thread does not change another thread's current device") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(4) == cudaSuccess);
    int seen_by_other_before = -1, seen_by_other_after = -1;
    std::barrier step(2);
    std::thread other([&] {
        cudaSetDevice(6);
        step.arrive_and_wait();   // main switches to 2 here
        step.arrive_and_wait();
        cudaGetDevice(&seen_by_other_after);
    });
    std::thread observer([&] { cudaGetDevice(&seen_by_other_before); });
    observer.join();
    step.arrive_and_wait();
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    step.arrive_and_wait();
    other.join();
    int mine = -1;
    CHECK(cudaGetDevice(&mine) == cudaSuccess);
    CHECK(mine == 2);
    CHECK(seen_by_other_after == 6);
    CHECK(seen_by_other_before == 0);   // a new thread starts on device 0, whatever others chose
}

TEST_CASE("a new host thread's current device is 0") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(7) == cudaSuccess);
    int seen = -1;
    std::thread fresh([&] { cudaGetDevice(&seen); });
    fresh.join();
    CHECK(seen == 0);
}

TEST_CASE("the last error belongs to the thread whose call failed") {
    use_machine("h200");
    cudaError_t other_after_failure = cudaErrorUnknown;
    cudaError_t other_peek = cudaErrorUnknown;
    std::thread failing([&] {
        cudaSetDevice(3);   // 101 on a one-GPU machine
        other_peek = cudaPeekAtLastError();
        other_after_failure = cudaGetLastError();
    });
    failing.join();
    CHECK(other_peek == cudaErrorInvalidDevice);
    CHECK(other_after_failure == cudaErrorInvalidDevice);
    CHECK(cudaGetLastError() == cudaSuccess);   // this thread made no failing call

    CHECK(cudaSetDevice(5) == cudaErrorInvalidDevice);
    cudaError_t seen_by_fresh_thread = cudaErrorUnknown;
    std::thread fresh([&] { seen_by_fresh_thread = cudaGetLastError(); });
    fresh.join();
    CHECK(seen_by_fresh_thread == cudaSuccess);
    CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
}

TEST_CASE("peer access enabled by one thread holds for kernels launched by another") {
    // Peer access belongs to the device's context, which all host threads share.
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    const auto input = conformance::random_floats(kCount, 300);
    float* on_one = nullptr;
    float* on_zero = nullptr;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&on_one, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(on_one, input.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&on_zero, kCount * sizeof(float)) == cudaSuccess);
    cudaError_t launched = cudaErrorUnknown, synchronised = cudaErrorUnknown;
    std::thread worker([&] {
        cudaSetDevice(0);
        affine<<<blocks_for(kCount), kBlock>>>(on_one, on_zero, 2.0f, 0.0f, kCount);
        launched = cudaGetLastError();
        synchronised = cudaDeviceSynchronize();
    });
    worker.join();
    CHECK(launched == cudaSuccess);
    CHECK(synchronised == cudaSuccess);
    std::vector<float> output(kCount, 0.0f);
    REQUIRE(cudaMemcpy(output.data(), on_zero, kCount * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    int mistakes = 0;
    for (std::size_t i = 0; i < kCount; ++i)
        if (!(output[i] == doctest::Approx(input[i] * 2.0f).epsilon(1e-6))) ++mistakes;
    CHECK(mistakes == 0);
}
