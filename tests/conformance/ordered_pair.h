// Two host threads and one device, for the host-order cases (host_order_test.cpp and the
// OpenMP ones in openmp_threads_test.cpp): thread A copies 64 MiB to the device and waits for
// the copy; the synchronisation under test orders thread B after A; B records an event and reads
// the buffer. On a GPU that event comes after the copy's end.
#pragma once

#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "conformance_support.h"
#if !defined(MGPU_CONFORMANCE_REAL_GPU)
#include "mgpu/races.h"
#endif

namespace conformance {

inline constexpr std::size_t kBytes = 64u << 20;

// A's copy and B's event, on one device, on two streams that do not wait for each other.
class OrderedPair {
public:
    explicit OrderedPair(const std::string& topology = "h200") {
        conformance::use_machine(topology);
        REQUIRE(cudaSetDevice(0) == cudaSuccess);
        REQUIRE(cudaMallocHost(&host_, kBytes) == cudaSuccess);
        REQUIRE(cudaMalloc(&device_, kBytes) == cudaSuccess);
        REQUIRE(cudaStreamCreateWithFlags(&stream_a_, cudaStreamNonBlocking) == cudaSuccess);
        REQUIRE(cudaStreamCreateWithFlags(&stream_b_, cudaStreamNonBlocking) == cudaSuccess);
        for (cudaEvent_t* event : {&copy_start_, &copy_end_, &b_event_}) REQUIRE(cudaEventCreate(event) == cudaSuccess);
        // Warm up the copy path once, so that neither side pays for a first use.
        REQUIRE(cudaMemcpyAsync(device_, host_, kBytes, cudaMemcpyHostToDevice, stream_a_) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream_a_) == cudaSuccess);
    }
    ~OrderedPair() {
        for (cudaEvent_t event : {copy_start_, copy_end_, b_event_}) cudaEventDestroy(event);
        cudaStreamDestroy(stream_a_);
        cudaStreamDestroy(stream_b_);
        cudaFree(device_);
        cudaFreeHost(host_);
    }
    OrderedPair(const OrderedPair&) = delete;
    OrderedPair& operator=(const OrderedPair&) = delete;

    // Thread A's part, up to its release: the copy, waited for.
    void a_copies() {
        cudaSetDevice(0);
        a_ok_ = cudaEventRecord(copy_start_, stream_a_) == cudaSuccess &&
                cudaMemcpyAsync(device_, host_, kBytes, cudaMemcpyHostToDevice, stream_a_) == cudaSuccess &&
                cudaEventRecord(copy_end_, stream_a_) == cudaSuccess && cudaStreamSynchronize(stream_a_) == cudaSuccess;
    }

    // Thread B's part, after its acquire: an event on its own idle stream, and a copy out of the
    // buffer A wrote (a race unless A's copy is ordered before it).
    void b_records() {
        cudaSetDevice(0);
        b_ok_ = cudaEventRecord(b_event_, stream_b_) == cudaSuccess &&
                cudaMemcpyAsync(host_, device_, 4096, cudaMemcpyDeviceToHost, stream_b_) == cudaSuccess &&
                cudaStreamSynchronize(stream_b_) == cudaSuccess;
    }

    // B's event came after A's copy ended.
    void check() {
        REQUIRE(a_ok_);
        REQUIRE(b_ok_);
        float copy_ms = 0;
        float until_b_ms = 0;
        REQUIRE(cudaEventElapsedTime(&copy_ms, copy_start_, copy_end_) == cudaSuccess);
        REQUIRE(cudaEventElapsedTime(&until_b_ms, copy_start_, b_event_) == cudaSuccess);
        CAPTURE(copy_ms);
        CAPTURE(until_b_ms);
        CHECK(copy_ms > 0.5f);   // 64 MiB over a host link: over a millisecond on any GPU
        CHECK(until_b_ms >= copy_ms * 0.999f);
#if !defined(MGPU_CONFORMANCE_REAL_GPU)
        const auto races = mgpu::trace::find_races(mgpu::sim::trace(), 10);
        CHECK(races.empty());
#endif
    }

private:
    void* host_ = nullptr;
    void* device_ = nullptr;
    cudaStream_t stream_a_ = nullptr;
    cudaStream_t stream_b_ = nullptr;
    cudaEvent_t copy_start_ = nullptr;
    cudaEvent_t copy_end_ = nullptr;
    cudaEvent_t b_event_ = nullptr;
    bool a_ok_ = false;
    bool b_ok_ = false;
};

}  // namespace conformance
