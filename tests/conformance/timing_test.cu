// cuda-facts.md, "Speeds": bandwidths measured with cudaEventElapsedTime the way a course
// program measures them, compared with the H200's measured figures (within 10%).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::gigabytes_per_second;
using conformance::kBlock;
using conformance::use_machine;
using conformance::within_fraction;

namespace {

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;

// How many times time_on_stream runs its work: once on the simulator, whose timings do not vary;
// on a real GPU once untimed, then five timed runs of which the median counts.
constexpr int kUntimedRuns = conformance::kRealGpu ? 1 : 0;
constexpr int kTimedRuns = conformance::kRealGpu ? 5 : 1;

// Milliseconds between two events recorded around `work` on `stream` (the median of kTimedRuns).
template <class Work>
float time_on_stream(cudaStream_t stream, Work&& work) {
    for (int run = 0; run < kUntimedRuns; ++run) work();
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    cudaEvent_t start = nullptr, stop = nullptr;
    REQUIRE(cudaEventCreate(&start) == cudaSuccess);
    REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
    std::vector<float> times;
    for (int run = 0; run < kTimedRuns; ++run) {
        REQUIRE(cudaEventRecord(start, stream) == cudaSuccess);
        work();
        REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
        REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
        float ms = -1.0f;
        REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
        REQUIRE(ms > 0.0f);
        times.push_back(ms);
    }
    CHECK(cudaEventDestroy(start) == cudaSuccess);
    CHECK(cudaEventDestroy(stop) == cudaSuccess);
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// Host-device copy bandwidth in GB/s for pinned or pageable host memory.
double host_copy_gbps(cudaMemcpyKind kind, bool pinned) {
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, kCopyBytes) == cudaSuccess);
    void* host = nullptr;
    std::vector<unsigned char> pageable;
    if (pinned) {
        REQUIRE(cudaMallocHost(&host, kCopyBytes) == cudaSuccess);
    } else {
        pageable.resize(kCopyBytes);
        host = pageable.data();
    }
    std::memset(host, 0x5b, kCopyBytes);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    void* dst = kind == cudaMemcpyHostToDevice ? device : host;
    const void* src = kind == cudaMemcpyHostToDevice ? host : device;
    const float ms = time_on_stream(stream, [&] {
        REQUIRE(cudaMemcpyAsync(dst, src, kCopyBytes, kind, stream) == cudaSuccess);
    });
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    if (pinned) CHECK(cudaFreeHost(host) == cudaSuccess);
    CHECK(cudaFree(device) == cudaSuccess);
    return gigabytes_per_second(static_cast<double>(kCopyBytes), ms);
}

// One-way peer copy bandwidth from device 0 to device 1, with or without peer access enabled.
double peer_copy_gbps(const std::string& preset, bool enable_access) {
    use_machine(preset);
    const std::size_t bytes = std::size_t{64} << 20;
    void* on0 = nullptr;
    void* on1 = nullptr;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&on1, bytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&on0, bytes) == cudaSuccess);
    REQUIRE(cudaMemset(on0, 0x6c, bytes) == cudaSuccess);
    if (enable_access) REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    const float ms = time_on_stream(stream, [&] {
        REQUIRE(cudaMemcpyPeerAsync(on1, 1, on0, 0, bytes, stream) == cudaSuccess);
    });
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    return gigabytes_per_second(static_cast<double>(bytes), ms);
}

}  // namespace

TEST_CASE("host to device copy from pinned memory runs at 55.3 GB/s on one H200") {
    use_machine("h200");
    const double gbps = host_copy_gbps(cudaMemcpyHostToDevice, true);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 55.3, 0.10));
}

TEST_CASE("device to host copy into pinned memory runs at 55.2 GB/s on one H200") {
    use_machine("h200");
    const double gbps = host_copy_gbps(cudaMemcpyDeviceToHost, true);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 55.2, 0.10));
}

TEST_CASE("host to device copy from pageable memory runs at 7.1 GB/s on one H200") {
    use_machine("h200");
    const double gbps = host_copy_gbps(cudaMemcpyHostToDevice, false);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 7.1, 0.10));
}

TEST_CASE("device to host copy into pageable memory runs at 11.0 GB/s on one H200") {
    use_machine("h200");
    const double gbps = host_copy_gbps(cudaMemcpyDeviceToHost, false);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 11.0, 0.10));
}

TEST_CASE("host to device copy of 64 MiB measured with cudaMemcpy between events on the legacy stream runs at 55.3 GB/s pinned") {
    use_machine("h200");
    void* device = nullptr;
    void* pinned = nullptr;
    REQUIRE(cudaMalloc(&device, kCopyBytes) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, kCopyBytes) == cudaSuccess);
    std::memset(pinned, 0x17, kCopyBytes);
    const float ms = time_on_stream(0, [&] {
        REQUIRE(cudaMemcpy(device, pinned, kCopyBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    });
    const double gbps = gigabytes_per_second(static_cast<double>(kCopyBytes), ms);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 55.3, 0.10));
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}

TEST_CASE("device to device copy runs at 2134 GB/s (bytes copied / time) on one H200") {
    use_machine("h200");
    const std::size_t bytes = std::size_t{256} << 20;
    void* a = nullptr;
    void* b = nullptr;
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    REQUIRE(cudaMemset(a, 0x29, bytes) == cudaSuccess);
    const float ms = time_on_stream(0, [&] {
        REQUIRE(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess);
    });
    const double gbps = gigabytes_per_second(static_cast<double>(bytes), ms);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 2134.0, 0.10));
}

TEST_CASE("a memory-bound kernel x[i] *= a over 256 MiB runs at 2.74 TB/s counting read plus write") {
    use_machine("h200");
    const std::size_t count = (std::size_t{256} << 20) / sizeof(float);
    const auto values = conformance::random_floats(4096, 2740);
    float* x = nullptr;
    REQUIRE(cudaMalloc(&x, count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemset(x, 0x3f, count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(x, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    const float ms = time_on_stream(0, [&] {
        scale_in_place<<<blocks_for(count), kBlock>>>(x, 0.5f, count);
        REQUIRE(cudaGetLastError() == cudaSuccess);
    });
    const double gbps = gigabytes_per_second(2.0 * static_cast<double>(count * sizeof(float)), ms);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 2740.0, 0.10));
    // The kernel did the work it was timed for, every time it ran (halving is exact in floats).
    float factor = 1.0f;
    for (int run = 0; run < kUntimedRuns + kTimedRuns; ++run) factor *= 0.5f;
    std::vector<float> head(values.size(), 0.0f);
    REQUIRE(cudaMemcpy(head.data(), x, head.size() * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (std::size_t i = 0; i < head.size(); ++i) {
        CAPTURE(i);
        REQUIRE(head[i] == values[i] * factor);
    }
}

TEST_CASE("kernel launch plus tiny kernel, back to back, takes 4.4 us each") {
    use_machine("h200");
    float* x = nullptr;
    REQUIRE(cudaMalloc(&x, sizeof(float)) == cudaSuccess);
    constexpr int kLaunches = 1000;
    if (conformance::kRealGpu)   // the same launches once, untimed: the first ones of a process cost more
        for (int i = 0; i < kLaunches; ++i) write_one<<<1, 1>>>(x, static_cast<float>(i));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double before = mgpu::sim::host_now_us();
    for (int i = 0; i < kLaunches; ++i) write_one<<<1, 1>>>(x, static_cast<float>(i));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double per_launch_us = (mgpu::sim::host_now_us() - before) / kLaunches;
    CAPTURE(per_launch_us);
    CHECK(within_fraction(per_launch_us, 4.4, 0.10));
    float last = 0.0f;
    REQUIRE(cudaMemcpy(&last, x, sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(last == static_cast<float>(kLaunches - 1));
}

TEST_CASE("a peer copy over NVLink with P2P enabled (8 x H200) is far faster than a staged copy on PCIe without P2P") {
    const double nvlink = peer_copy_gbps("hgx-h200-8", true);
    const double staged = peer_copy_gbps("pcie-4", false);
    CAPTURE(nvlink);
    CAPTURE(staged);
    CHECK(nvlink > 5.0 * staged);
}

TEST_CASE("a one-way peer copy over NVLink 4 with P2P enabled runs at 371-377 GB/s, under the 450 GB/s line rate") {
    const double gbps = peer_copy_gbps("hgx-h200-8", true);
    CAPTURE(gbps);
    CHECK(gbps >= 371.0 * 0.9);
    CHECK(gbps <= 450.0);
}

TEST_CASE("a one-way peer copy on the NVSwitch machine without P2P enabled runs at about 37 GB/s (staged)") {
    const double gbps = peer_copy_gbps("hgx-h200-8", false);
    CAPTURE(gbps);
    CHECK(within_fraction(gbps, 37.0, 0.10));
}

TEST_CASE("cudaEventElapsedTime is additive over consecutive events on one stream") {
    use_machine("h200");
    void* device = nullptr;
    void* pinned = nullptr;
    REQUIRE(cudaMalloc(&device, kCopyBytes) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, kCopyBytes) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    cudaEvent_t marks[3];
    for (auto& e : marks) REQUIRE(cudaEventCreate(&e) == cudaSuccess);
    REQUIRE(cudaEventRecord(marks[0], stream) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(device, pinned, kCopyBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    REQUIRE(cudaEventRecord(marks[1], stream) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(device, pinned, kCopyBytes / 2, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    REQUIRE(cudaEventRecord(marks[2], stream) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    float first = 0, second = 0, whole = 0;
    REQUIRE(cudaEventElapsedTime(&first, marks[0], marks[1]) == cudaSuccess);
    REQUIRE(cudaEventElapsedTime(&second, marks[1], marks[2]) == cudaSuccess);
    REQUIRE(cudaEventElapsedTime(&whole, marks[0], marks[2]) == cudaSuccess);
    CHECK(whole == doctest::Approx(first + second).epsilon(1e-4));
    // Half the bytes take about half the time.
    CHECK(second == doctest::Approx(first / 2).epsilon(0.05));
    for (auto& e : marks) CHECK(cudaEventDestroy(e) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}
