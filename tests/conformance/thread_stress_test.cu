// Many host threads calling the runtime at once, thousands of calls each: one thread per device
// (lesson 2's "one host thread per GPU"), and several threads on one device. Every thread mixes
// allocations, pinned and pageable copies, memsets, launches, streams, events, queries and errors,
// and checks each result against its own host computation. `tools/mgpu test --tsan` runs this
// program under ThreadSanitizer, which also reports any data race inside the runtime.
#include <doctest/doctest.h>

#include <barrier>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::kBlock;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 4099;   // odd, and more than one block
constexpr int kRounds = 150;           // about 25 calls a round

// Where a thread's first wrong answer was, or empty.
struct Outcome {
    std::string problem;
    int checks = 0;
};

#define STRESS_EXPECT(condition)                                                                      \
    do {                                                                                              \
        ++outcome.checks;                                                                             \
        if (!(condition)) {                                                                           \
            outcome.problem = "round " + std::to_string(round) + ": " #condition;                     \
            return outcome;                                                                           \
        }                                                                                             \
    } while (0)

// One thread's work on `device`: rounds of copy in, scale, memset, copy out and check, with the
// stream and event calls a multi-GPU program makes around them.
Outcome drive_device(int device, unsigned seed) {
    Outcome outcome;
    int round = -1;
    STRESS_EXPECT(cudaSetDevice(device) == cudaSuccess);
    const auto input = conformance::random_floats(kCount, seed);
    const std::size_t bytes = kCount * sizeof(float);
    float* pinned = nullptr;
    STRESS_EXPECT(cudaMallocHost(&pinned, bytes) == cudaSuccess);
    std::vector<float> pageable(kCount, 0.0f);
    cudaStream_t stream = nullptr;
    STRESS_EXPECT(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    for (round = 0; round < kRounds; ++round) {
        const float factor = 1.0f + 0.001f * static_cast<float>(round % 7);
        float* on_device = nullptr;
        STRESS_EXPECT(cudaMalloc(&on_device, bytes) == cudaSuccess);
        int current = -1;
        STRESS_EXPECT(cudaGetDevice(&current) == cudaSuccess && current == device);
        cudaEvent_t copied = nullptr, done = nullptr;
        STRESS_EXPECT(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming) == cudaSuccess);
        STRESS_EXPECT(cudaEventCreate(&done) == cudaSuccess);
        std::memcpy(pinned, input.data(), bytes);
        STRESS_EXPECT(cudaMemcpyAsync(on_device, pinned, bytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
        STRESS_EXPECT(cudaEventRecord(copied, stream) == cudaSuccess);
        STRESS_EXPECT(cudaStreamWaitEvent(stream, copied, 0) == cudaSuccess);
        scale_in_place<<<blocks_for(kCount), kBlock, 0, stream>>>(on_device, factor, kCount);
        STRESS_EXPECT(cudaGetLastError() == cudaSuccess);
        STRESS_EXPECT(cudaEventRecord(done, stream) == cudaSuccess);
        const cudaError_t query = cudaEventQuery(done);
        STRESS_EXPECT(query == cudaSuccess || query == cudaErrorNotReady);
        STRESS_EXPECT(cudaMemcpyAsync(pinned, on_device, bytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
        STRESS_EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
        for (std::size_t i = 0; i < kCount; i += 97) STRESS_EXPECT(pinned[i] == input[i] * factor);
        // The pageable path: a synchronous copy back after a memset of the first half.
        STRESS_EXPECT(cudaMemsetAsync(on_device, 0, bytes / 2, stream) == cudaSuccess);
        STRESS_EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
        STRESS_EXPECT(cudaMemcpy(pageable.data(), on_device, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        STRESS_EXPECT(pageable[0] == 0.0f && pageable[kCount - 1] == input[kCount - 1] * factor);
        float ms = -1.0f;
        STRESS_EXPECT(cudaEventElapsedTime(&ms, done, done) == cudaSuccess && ms == 0.0f);
        // A failing call leaves its code as this thread's last error, and only this thread's.
        STRESS_EXPECT(cudaSetDevice(-1) == cudaErrorInvalidDevice);
        STRESS_EXPECT(cudaPeekAtLastError() == cudaErrorInvalidDevice);
        STRESS_EXPECT(cudaGetLastError() == cudaErrorInvalidDevice);
        STRESS_EXPECT(cudaGetLastError() == cudaSuccess);
        STRESS_EXPECT(cudaEventDestroy(copied) == cudaSuccess);
        STRESS_EXPECT(cudaEventDestroy(done) == cudaSuccess);
        STRESS_EXPECT(cudaFree(on_device) == cudaSuccess);
    }
    STRESS_EXPECT(cudaStreamDestroy(stream) == cudaSuccess);
    STRESS_EXPECT(cudaFreeHost(pinned) == cudaSuccess);
    STRESS_EXPECT(cudaDeviceSynchronize() == cudaSuccess);
    return outcome;
}

// Starts `threads` threads at once, thread t on device `device_of(t)`, and checks each one's outcome.
template <class DeviceOf>
void run_threads(int threads, DeviceOf device_of) {
    std::vector<Outcome> outcomes(threads);
    std::barrier start_together(threads);
    std::vector<std::thread> running;
    for (int t = 0; t < threads; ++t)
        running.emplace_back([&, t] {
            start_together.arrive_and_wait();
            outcomes[t] = drive_device(device_of(t), 1000u + static_cast<unsigned>(t));
        });
    for (auto& thread : running) thread.join();
    for (int t = 0; t < threads; ++t) {
        CAPTURE(t);
        CHECK(outcomes[t].problem == "");
        CHECK(outcomes[t].checks >= 2000);
    }
}

}  // namespace

TEST_CASE("one host thread per device, thousands of calls each at the same time, all with right results") {
    use_machine("hgx-h200-8");
    int devices = 0;
    REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
    run_threads(devices, [](int t) { return t; });
    for (int d = 0; d < devices; ++d) CHECK(mgpu::sim::live_device_allocations(d) == 0);
    CHECK(mgpu::sim::live_streams() == 0);
    CHECK(mgpu::sim::live_events() == 0);
    CHECK(mgpu::sim::live_pinned_host_allocations() == 0);
}

TEST_CASE("four host threads on one device, thousands of calls each at the same time, all with right results") {
    use_machine("h200");
    run_threads(4, [](int) { return 0; });
    CHECK(mgpu::sim::live_device_allocations(0) == 0);
    CHECK(mgpu::sim::live_streams() == 0);
}
