// cuda-facts.md, "Streams and synchronisation": copies with pinned memory and kernels on different
// non-default streams overlap; work within one stream does not; cudaStreamQuery reports a busy
// stream without storing 600 as the last error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "stream_scene.cuh"

using conformance::blocks_for;
using conformance::Buffers;
using conformance::kBlock;
using conformance::make_stream;
using conformance::only_op;
using conformance::use_machine;
using mgpu::trace::OpKind;

TEST_CASE("copies with pinned memory and kernels on different non-default streams overlap") {
    // cuda-facts.md: 10 memory-bound kernels on one stream and 4 device-to-host copies on another
    // finished together, in about the time of the longer of the two.
    use_machine("h200");
    const std::size_t kernel_count = std::size_t{8} << 20;
    const std::size_t copy_bytes = std::size_t{4} << 20;
    float* data = nullptr;
    void* copy_source = nullptr;
    void* pinned = nullptr;
    REQUIRE(cudaMalloc(&data, kernel_count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMalloc(&copy_source, 4 * copy_bytes) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, 4 * copy_bytes) == cudaSuccess);
    REQUIRE(cudaMemset(data, 0x3f, kernel_count * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemset(copy_source, 0x41, 4 * copy_bytes) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    cudaStream_t compute = make_stream(cudaStreamNonBlocking);
    cudaStream_t copies = make_stream(cudaStreamNonBlocking);
    if (conformance::kRealGpu) {   // the first copy and launch of a process, untimed
        REQUIRE(cudaMemcpyAsync(pinned, copy_source, copy_bytes, cudaMemcpyDeviceToHost, copies) == cudaSuccess);
        scale_in_place<<<blocks_for(kernel_count), kBlock, 0, compute>>>(data, 1.0f, kernel_count);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
    mgpu::sim::clear_trace();
    for (int c = 0; c < 4; ++c)
        REQUIRE(cudaMemcpyAsync(static_cast<char*>(pinned) + c * copy_bytes,
                                static_cast<char*>(copy_source) + c * copy_bytes, copy_bytes,
                                cudaMemcpyDeviceToHost, copies) == cudaSuccess);
    for (int k = 0; k < 10; ++k) {
        scale_in_place<<<blocks_for(kernel_count), kBlock, 0, compute>>>(data, 1.0f, kernel_count);
        REQUIRE(cudaGetLastError() == cudaSuccess);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);

    const auto kernels = conformance::ops_of_kind(OpKind::Kernel);
    const auto copy_ops = conformance::ops_of_kind(OpKind::MemcpyDtoH);
    REQUIRE(kernels.size() == 10);
    REQUIRE(copy_ops.size() == 4);
    double first_start = kernels.front().start_us, last_end = 0, kernel_busy = 0, copy_busy = 0;
    for (const auto& k : kernels) {
        first_start = std::min(first_start, k.start_us);
        last_end = std::max(last_end, k.end_us);
        kernel_busy += k.end_us - k.start_us;
    }
    for (const auto& c : copy_ops) {
        first_start = std::min(first_start, c.start_us);
        last_end = std::max(last_end, c.end_us);
        copy_busy += c.end_us - c.start_us;
    }
    if (conformance::kRealGpu) {
        // On a GPU which kernel meets which copy depends on how fast the host queues them (slower
        // under the tracer); that they meet does not.
        const bool some_pair_overlaps = std::any_of(kernels.begin(), kernels.end(), [&](const auto& k) {
            return std::any_of(copy_ops.begin(), copy_ops.end(),
                               [&](const auto& c) { return mgpu::trace::overlaps(k, c); });
        });
        CHECK(some_pair_overlaps);
    } else {
        CHECK(mgpu::trace::overlaps(kernels.front(), copy_ops.front()));
    }
    CHECK(last_end - first_start <= 1.1 * std::max(kernel_busy, copy_busy));
    CHECK(last_end - first_start < 0.9 * (kernel_busy + copy_busy));

    std::vector<unsigned char> expected(4 * copy_bytes, 0x41);
    CHECK(std::memcmp(pinned, expected.data(), expected.size()) == 0);
    CHECK(cudaStreamDestroy(compute) == cudaSuccess);
    CHECK(cudaStreamDestroy(copies) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
}

TEST_CASE("work within one stream never overlaps: each operation starts after the previous one ends") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamNonBlocking);
    mgpu::sim::clear_trace();
    buffers.long_copy(stream);
    buffers.long_kernel(stream);
    REQUIRE(cudaMemcpyAsync(buffers.pinned, buffers.device_copy, 1 << 20, cudaMemcpyDeviceToHost, stream) ==
            cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    const auto h2d = only_op(OpKind::MemcpyHtoD);
    const auto kernel = only_op(OpKind::Kernel);
    const auto d2h = only_op(OpKind::MemcpyDtoH);
    CHECK(kernel.start_us >= h2d.end_us);
    CHECK(d2h.start_us >= kernel.end_us);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaStreamQuery answers 600 while a stream's kernel runs and 0 once it is done") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamDefault);
    buffers.long_kernel(stream);
    CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaStreamQuery(stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
