// A kernel that polls a flag in page-locked host memory holds its stream until the host raises
// the flag, so that work queued behind it starts together and events time that work alone: the
// pattern of cuda-samples' p2pBandwidthLatencyTest. Its latency figures are the device's pace of
// back-to-back copies, not the host's pace of queueing them.
#include <doctest/doctest.h>

#include "conformance_support.h"

using conformance::use_machine;
using conformance::within_fraction;

namespace {

constexpr int kCopies = 100;

}  // namespace

// Spins until the host raises *flag, or until timeout_clocks have passed on the device clock
// (about a second on an H200: long enough that only the flag ends it).
__global__ void hold_until_raised(volatile int* flag, int* seen, unsigned long long timeout_clocks = 2000000000ull)
{
    const long long start = clock64();
    while (*flag == 0 && clock64() - start < static_cast<long long>(timeout_clocks)) {
    }
    *seen = *flag;
}

// Tells the host it has started, through page-locked memory the host spins on.
__global__ void signal_host(volatile int* started)
{
    *started = 1;
}

namespace {

struct HeldStream {
    int* flag = nullptr;   // page-locked, polled by the kernel
    int* seen = nullptr;   // what the kernel read when it stopped
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;

    HeldStream() {
        REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocPortable) == cudaSuccess);
        REQUIRE(cudaMalloc(&seen, sizeof(int)) == cudaSuccess);
        REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
        REQUIRE(cudaEventCreate(&start) == cudaSuccess);
        REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
    }
    ~HeldStream() {
        CHECK(cudaEventDestroy(start) == cudaSuccess);
        CHECK(cudaEventDestroy(stop) == cudaSuccess);
        CHECK(cudaStreamDestroy(stream) == cudaSuccess);
        CHECK(cudaFree(seen) == cudaSuccess);
        CHECK(cudaFreeHost(flag) == cudaSuccess);
    }

    void hold() {
        *static_cast<volatile int*>(flag) = 0;
        hold_until_raised<<<1, 1, 0, stream>>>(flag, seen);
        REQUIRE(cudaGetLastError() == cudaSuccess);
        REQUIRE(cudaEventRecord(start, stream) == cudaSuccess);
    }
    // Raises the flag and waits; milliseconds from `start` to `stop`.
    float release() {
        REQUIRE(cudaEventRecord(stop, stream) == cudaSuccess);
        *static_cast<volatile int*>(flag) = 1;
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        float ms = -1.0f;
        REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
        return ms;
    }
};

// Microseconds per 4-byte copy from device `from` to device `to`, kCopies of them queued behind
// a held stream on `from`, as p2pBandwidthLatencyTest measures its latency matrix.
double copy_latency_us(int from, int to, bool peer_access) {
    REQUIRE(cudaSetDevice(to) == cudaSuccess);
    int* target = nullptr;
    REQUIRE(cudaMalloc(&target, 2 * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaSetDevice(from) == cudaSuccess);
    int* source = nullptr;
    REQUIRE(cudaMalloc(&source, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemset(source, 0, sizeof(int)) == cudaSuccess);
    if (peer_access) REQUIRE(cudaDeviceEnablePeerAccess(to, 0) == cudaSuccess);
    double us = 0;
    {
        HeldStream held;
        // Once untimed: the first copies of a process cost more on a real GPU.
        for (int round = 0; round < 2; ++round) {
            held.hold();
            for (int i = 0; i < kCopies; ++i)
                REQUIRE(cudaMemcpyPeerAsync(target + (from == to), to, source, from, sizeof(int), held.stream) ==
                        cudaSuccess);
            us = held.release() * 1e3 / kCopies;
        }
    }
    if (peer_access) REQUIRE(cudaDeviceDisablePeerAccess(to) == cudaSuccess);
    CHECK(cudaFree(source) == cudaSuccess);
    REQUIRE(cudaSetDevice(to) == cudaSuccess);
    CHECK(cudaFree(target) == cudaSuccess);
    return us;
}

}  // namespace

TEST_CASE("work queued behind a kernel that polls a host flag waits until the host raises the flag") {
    use_machine("h200");
    HeldStream held;
    held.hold();
    int* later = nullptr;
    REQUIRE(cudaMalloc(&later, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(later, 7, sizeof(int), held.stream) == cudaSuccess);
    CHECK(cudaEventQuery(held.start) == cudaErrorNotReady);
    CHECK(cudaStreamQuery(held.stream) == cudaErrorNotReady);
    const float ms = held.release();
    CHECK(ms >= 0.0f);
    int seen = 0;
    REQUIRE(cudaMemcpy(&seen, held.seen, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(seen == 1);
    CHECK(cudaStreamQuery(held.stream) == cudaSuccess);
    CHECK(cudaFree(later) == cudaSuccess);
}

TEST_CASE("a host that waits for a kernel polling a flag it never raised is not left waiting forever") {
    use_machine("h200");
    int* flag = nullptr;
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocPortable) == cudaSuccess);
    *static_cast<volatile int*>(flag) = 0;
    int* seen = nullptr;
    REQUIRE(cudaMalloc(&seen, sizeof(int)) == cudaSuccess);
    hold_until_raised<<<1, 1>>>(flag, seen, 20000000ull);   // about 10 ms of device clock
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    int got = -1;
    REQUIRE(cudaMemcpy(&got, seen, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(got == 0);
    CHECK(cudaFree(seen) == cudaSuccess);
    CHECK(cudaFreeHost(flag) == cudaSuccess);
}

TEST_CASE("4-byte device-to-device copies queued behind a held stream take 1.79 us each on one H200") {
    use_machine("h200");
    const double us = copy_latency_us(0, 0, false);
    CAPTURE(us);
    CHECK(within_fraction(us, 1.79, 0.25));
}

TEST_CASE("a 4-byte peer copy takes far longer staged through host memory than with peer access") {
    use_machine("islands-2x2");
    const double with_access = copy_latency_us(0, 1, true);
    const double staged = copy_latency_us(0, 1, false);
    const double across_sockets = copy_latency_us(0, 2, false);
    CAPTURE(with_access);
    CAPTURE(staged);
    CAPTURE(across_sockets);
    CHECK(with_access < 3.0);
    CHECK(staged > 4.0 * with_access);
    CHECK(across_sockets > 4.0 * with_access);
}

TEST_CASE("a kernel that signals the host through page-locked memory reaches a host spinning on it") {
    use_machine("h200");
    int* started = nullptr;
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&started), sizeof(int), cudaHostAllocPortable) == cudaSuccess);
    volatile int* seen_by_host = started;
    *seen_by_host = 0;
    signal_host<<<1, 1>>>(started);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    while (*seen_by_host == 0) {
    }
    CHECK(*seen_by_host == 1);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaFreeHost(started) == cudaSuccess);
}
