// Schedules (control.h): eager runs each operation as soon as it is issued, lazy as late as
// the program's synchronisation allows, shuffle:SEED runs independent streams in a seeded random
// order. A program that forgets a dependency must give a wrong result under lazy and under some
// shuffle seed, the right one under eager; a correct program is right under all of them; the same
// seed gives the same result twice.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::kBlock;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 65537;
constexpr std::size_t kBytes = kCount * sizeof(float);
constexpr float kScale = 3.0f;
constexpr float kOffset = 0.5f;

std::vector<std::string> shuffle_schedules() {
    std::vector<std::string> names;
    for (int seed = 1; seed <= 8; ++seed) names.push_back("shuffle:" + std::to_string(seed));
    return names;
}

// Copy stream: new input to the device. Compute stream: out = in * kScale + kOffset, then the
// result back to the host. With `wait_for_copy` the compute stream waits on an event recorded
// after the copy; without it the kernel may read the input before the copy lands.
std::vector<float> copy_then_compute(const std::string& schedule, bool wait_for_copy) {
    use_machine("h200", schedule);
    const auto stale = conformance::random_floats(kCount, 1);
    const auto fresh = conformance::random_floats(kCount, 2);
    float* pinned_in = nullptr;
    float* pinned_out = nullptr;
    float* device_in = nullptr;
    float* device_out = nullptr;
    REQUIRE(cudaMallocHost(&pinned_in, kBytes) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned_out, kBytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&device_in, kBytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&device_out, kBytes) == cudaSuccess);
    // The device starts out holding other data, so reading too early gives a visibly wrong answer.
    REQUIRE(cudaMemcpy(device_in, stale.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    std::copy(fresh.begin(), fresh.end(), pinned_in);

    cudaStream_t copy_stream = nullptr;
    cudaStream_t compute_stream = nullptr;
    cudaEvent_t copied = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&compute_stream, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming) == cudaSuccess);

    REQUIRE(cudaMemcpyAsync(device_in, pinned_in, kBytes, cudaMemcpyHostToDevice, copy_stream) == cudaSuccess);
    REQUIRE(cudaEventRecord(copied, copy_stream) == cudaSuccess);
    if (wait_for_copy) REQUIRE(cudaStreamWaitEvent(compute_stream, copied, 0) == cudaSuccess);
    affine<<<blocks_for(kCount), kBlock, 0, compute_stream>>>(device_in, device_out, kScale, kOffset, kCount);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(pinned_out, device_out, kBytes, cudaMemcpyDeviceToHost, compute_stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(compute_stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(copy_stream) == cudaSuccess);

    std::vector<float> result(pinned_out, pinned_out + kCount);
    CHECK(cudaEventDestroy(copied) == cudaSuccess);
    CHECK(cudaStreamDestroy(copy_stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(compute_stream) == cudaSuccess);
    CHECK(cudaFreeHost(pinned_in) == cudaSuccess);
    CHECK(cudaFreeHost(pinned_out) == cudaSuccess);
    CHECK(cudaFree(device_in) == cudaSuccess);
    CHECK(cudaFree(device_out) == cudaSuccess);
    return result;
}

// What the program computes when every dependency is kept, worked out on the host.
std::vector<float> expected_result() {
    auto values = conformance::random_floats(kCount, 2);
    for (float& v : values) v = v * kScale + kOffset;
    return values;
}

bool matches(const std::vector<float>& got, const std::vector<float>& expected) {
    if (got.size() != expected.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(got[i] == doctest::Approx(expected[i]).epsilon(1e-6))) return false;
    return true;
}

}  // namespace

TEST_CASE("a program missing cudaStreamWaitEvent between its copy and compute streams is right under eager") {
    CHECK(matches(copy_then_compute("eager", false), expected_result()));
}

TEST_CASE("a program missing cudaStreamWaitEvent between its copy and compute streams is wrong under lazy") {
    CHECK_FALSE(matches(copy_then_compute("lazy", false), expected_result()));
}

TEST_CASE("a program missing cudaStreamWaitEvent is wrong under at least one of shuffle:1..8") {
    const auto expected = expected_result();
    int wrong = 0;
    for (const auto& schedule : shuffle_schedules())
        if (!matches(copy_then_compute(schedule, false), expected)) ++wrong;
    CHECK(wrong >= 1);
}

TEST_CASE("the same program with cudaStreamWaitEvent is right under eager, lazy and shuffle:1..8") {
    const auto expected = expected_result();
    std::vector<std::string> schedules = {"eager", "lazy"};
    for (const auto& s : shuffle_schedules()) schedules.push_back(s);
    for (const auto& schedule : schedules) {
        CAPTURE(schedule);
        CHECK(matches(copy_then_compute(schedule, true), expected));
    }
}

TEST_CASE("the same shuffle seed gives the same result twice") {
    for (const auto& schedule : shuffle_schedules()) {
        CAPTURE(schedule);
        const auto first = copy_then_compute(schedule, false);
        const auto second = copy_then_compute(schedule, false);
        CHECK(first == second);
    }
}

namespace {

// Device-to-host copy into pinned memory with cudaMemcpyAsync; reads the host buffer before
// (and after) synchronising. Returns {what was read without synchronising, after it}.
std::pair<std::vector<float>, std::vector<float>> read_before_and_after_sync(const std::string& schedule) {
    use_machine("h200", schedule);
    const auto on_device = conformance::random_floats(kCount, 3);
    const auto old_host = conformance::random_floats(kCount, 4);
    float* device = nullptr;
    float* pinned = nullptr;
    REQUIRE(cudaMalloc(&device, kBytes) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(device, on_device.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    std::copy(old_host.begin(), old_host.end(), pinned);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(pinned, device, kBytes, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
    std::vector<float> unsynchronised(pinned, pinned + kCount);   // the forgotten synchronisation
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    std::vector<float> synchronised(pinned, pinned + kCount);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(cudaFree(device) == cudaSuccess);
    return {unsynchronised, synchronised};
}

}  // namespace

TEST_CASE("reading pinned memory after cudaMemcpyAsync device to host without synchronising shows stale data under lazy") {
    const auto [unsynchronised, synchronised] = read_before_and_after_sync("lazy");
    CHECK(unsynchronised == conformance::random_floats(kCount, 4));
    CHECK(synchronised == conformance::random_floats(kCount, 3));
}

TEST_CASE("reading pinned memory after cudaMemcpyAsync device to host shows the copied data once the stream is synchronised, under every schedule") {
    std::vector<std::string> schedules = {"eager", "lazy"};
    for (const auto& s : shuffle_schedules()) schedules.push_back(s);
    for (const auto& schedule : schedules) {
        CAPTURE(schedule);
        const auto [unsynchronised, synchronised] = read_before_and_after_sync(schedule);
        CHECK(synchronised == conformance::random_floats(kCount, 3));
    }
}
