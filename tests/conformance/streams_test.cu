// cuda-facts.md, "Streams and synchronisation": which calls block the host, how the legacy and
// per-thread default streams order work against other streams, cudaSetDevice, and launches into
// another device's stream. Everything is measured on the simulator's virtual clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "stream_scene.cuh"

using conformance::Buffers;
using conformance::kLongCopyBytes;
using conformance::make_stream;
using conformance::only_op;
using conformance::use_machine;
using mgpu::trace::OpKind;

// ---- which calls block the host ----------------------------------------------------------

TEST_CASE("cudaMemcpyAsync with pinned memory does not block the host, in either direction") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamDefault);
    void* pinned_small = nullptr;
    REQUIRE(cudaMallocHost(&pinned_small, 4096) == cudaSuccess);
    std::memset(pinned_small, 0x11, 4096);

    for (cudaMemcpyKind kind : {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost}) {
        CAPTURE(static_cast<int>(kind));
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        mgpu::sim::clear_trace();
        buffers.long_kernel(stream);
        const double before = mgpu::sim::host_now_us();
        if (kind == cudaMemcpyHostToDevice)
            CHECK(cudaMemcpyAsync(buffers.device_copy, pinned_small, 4096, kind, stream) == cudaSuccess);
        else
            CHECK(cudaMemcpyAsync(pinned_small, buffers.device_copy, 4096, kind, stream) == cudaSuccess);
        const double after = mgpu::sim::host_now_us();
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        const auto kernel = only_op(OpKind::Kernel);
        CHECK(after < kernel.end_us);          // returned while the kernel was still running
        CHECK(after - before < 30.0);          // "returns in ~0.03 ms"
    }
    CHECK(cudaFreeHost(pinned_small) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaMemcpyAsync from device to pageable memory blocks the host until the stream's earlier work and the copy finish") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamDefault);
    std::vector<unsigned char> pageable(1 << 20, 0);
    mgpu::sim::clear_trace();
    buffers.long_kernel(stream);
    CHECK(cudaMemcpyAsync(pageable.data(), buffers.device_copy, pageable.size(), cudaMemcpyDeviceToHost, stream) ==
          cudaSuccess);
    const double after = mgpu::sim::host_now_us();
    const auto kernel = only_op(OpKind::Kernel);
    const auto copy = only_op(OpKind::MemcpyDtoH);
    CHECK(copy.start_us >= kernel.end_us);
    CHECK(after >= kernel.end_us);
    CHECK(after >= copy.end_us);
    // The data is on the host when the call returns.
    std::vector<unsigned char> expected(pageable.size(), 0x3f);
    CHECK(pageable == expected);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaMemcpyAsync of 64 MB from pageable memory to the device blocks the host (waits for the stream)") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamDefault);
    std::vector<unsigned char> pageable(kLongCopyBytes, 0x21);
    mgpu::sim::clear_trace();
    buffers.long_kernel(stream);
    CHECK(cudaMemcpyAsync(buffers.device_copy, pageable.data(), pageable.size(), cudaMemcpyHostToDevice, stream) ==
          cudaSuccess);
    const double after = mgpu::sim::host_now_us();
    const auto kernel = only_op(OpKind::Kernel);
    CHECK(after >= kernel.end_us);
    CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaMemcpyAsync of 4 KB to 1 MiB from pageable memory to the device does not block: the data is staged") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t stream = make_stream(cudaStreamDefault);
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{1} << 20}) {
        CAPTURE(bytes);
        const auto values = conformance::random_floats(bytes / sizeof(float), static_cast<unsigned>(bytes));
        std::vector<float> pageable = values;
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        mgpu::sim::clear_trace();
        buffers.long_kernel(stream);
        CHECK(cudaMemcpyAsync(buffers.device_copy, pageable.data(), bytes, cudaMemcpyHostToDevice, stream) ==
              cudaSuccess);
        const double after = mgpu::sim::host_now_us();
        // Overwriting the source right after the call cannot change what arrives: it was staged.
        std::fill(pageable.begin(), pageable.end(), -7.0f);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
        // The copy waits on the device for the kernel; the call returned before the copy was done, so
        // it did not wait for the stream (staging the bytes takes the host some time of its own).
        const auto copy = only_op(OpKind::MemcpyHtoD);
        CHECK(after < copy.end_us);
        std::vector<float> arrived(values.size(), 0.0f);
        REQUIRE(cudaMemcpy(arrived.data(), buffers.device_copy, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(arrived == values);
    }
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaMemcpy blocks the host until the copy is done") {
    use_machine("h200");
    Buffers buffers;
    std::vector<unsigned char> pageable(1 << 20, 0);
    mgpu::sim::clear_trace();
    CHECK(cudaMemcpy(pageable.data(), buffers.device_copy, pageable.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
    const double after = mgpu::sim::host_now_us();
    CHECK(after >= only_op(OpKind::MemcpyDtoH).end_us);
}

TEST_CASE("kernel launches do not block the host; cudaDeviceSynchronize waits for the kernel's end") {
    use_machine("h200");
    Buffers buffers;
    // The real runtime loads a kernel's module at its first launch (lazy loading): that one blocks.
    buffers.long_kernel(0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    mgpu::sim::clear_trace();
    const double before = mgpu::sim::host_now_us();
    buffers.long_kernel(0);
    const double after_launch = mgpu::sim::host_now_us();
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const double after_sync = mgpu::sim::host_now_us();
    const auto kernel = only_op(OpKind::Kernel);
    CHECK(after_launch < kernel.end_us);
    CHECK(after_launch - before < 30.0);
    CHECK(after_sync >= kernel.end_us);
}

// ---- the legacy default stream -----------------------------------------------------------

TEST_CASE("a kernel on the legacy default stream after work on a blocking stream waits for that work") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t blocking = make_stream(cudaStreamDefault);
    mgpu::sim::clear_trace();
    buffers.long_copy(blocking);
    buffers.tiny_kernel(0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us >= only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
}

TEST_CASE("a kernel on the legacy default stream after work on a cudaStreamNonBlocking stream does not wait") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t non_blocking = make_stream(cudaStreamNonBlocking);
    mgpu::sim::clear_trace();
    buffers.long_copy(non_blocking);
    buffers.tiny_kernel(0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(non_blocking) == cudaSuccess);
}

TEST_CASE("cudaStreamLegacy behaves as stream 0: it waits for blocking streams") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t blocking = make_stream(cudaStreamDefault);
    mgpu::sim::clear_trace();
    buffers.long_copy(blocking);
    buffers.tiny_kernel(cudaStreamLegacy);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us >= only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
}

TEST_CASE("work on a blocking stream waits for earlier work on the legacy default stream") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t blocking = make_stream(cudaStreamDefault);
    mgpu::sim::clear_trace();
    buffers.long_copy(0);
    buffers.tiny_kernel(blocking);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us >= only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
}

TEST_CASE("work on a cudaStreamNonBlocking stream does not wait for the legacy default stream") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t non_blocking = make_stream(cudaStreamNonBlocking);
    mgpu::sim::clear_trace();
    buffers.long_copy(0);
    buffers.tiny_kernel(non_blocking);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(non_blocking) == cudaSuccess);
}

TEST_CASE("two blocking streams do not wait for each other") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t first = make_stream(cudaStreamDefault);
    cudaStream_t second = make_stream(cudaStreamDefault);
    mgpu::sim::clear_trace();
    buffers.long_copy(first);
    buffers.tiny_kernel(second);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(first) == cudaSuccess);
    CHECK(cudaStreamDestroy(second) == cudaSuccess);
}

TEST_CASE("the legacy default stream of one device does not wait for another device's streams") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    Buffers on_one;
    cudaStream_t blocking_on_one = make_stream(cudaStreamDefault);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    Buffers on_zero;
    mgpu::sim::clear_trace();
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    on_one.long_copy(blocking_on_one);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    on_zero.tiny_kernel(0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(blocking_on_one) == cudaSuccess);
}

// ---- the per-thread default stream -------------------------------------------------------

TEST_CASE("the per-thread default stream is a blocking stream: the legacy default stream waits for it") {
    use_machine("h200");
    Buffers buffers;
    mgpu::sim::clear_trace();
    buffers.long_copy(cudaStreamPerThread);
    buffers.tiny_kernel(0);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us >= only_op(OpKind::MemcpyHtoD).end_us);
}

TEST_CASE("the per-thread default stream does not wait for other blocking streams") {
    use_machine("h200");
    Buffers buffers;
    cudaStream_t blocking = make_stream(cudaStreamDefault);
    mgpu::sim::clear_trace();
    buffers.long_copy(blocking);
    buffers.tiny_kernel(cudaStreamPerThread);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto kernel = only_op(OpKind::Kernel);
    CHECK(kernel.start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(kernel.stream == mgpu::trace::kPerThreadStream);
    CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
}

TEST_CASE("each host thread has its own per-thread default stream") {
    use_machine("h200");
    Buffers buffers;
    mgpu::sim::clear_trace();
    // Assertions stay on the main thread; the workers only report their results.
    cudaError_t copied = cudaErrorUnknown, launched = cudaErrorUnknown;
    std::thread copier([&] {
        copied = cudaMemcpyAsync(buffers.device_copy, buffers.pinned, kLongCopyBytes, cudaMemcpyHostToDevice,
                                 cudaStreamPerThread);
    });
    copier.join();
    std::thread launcher([&] {
        write_one<<<1, 1, 0, cudaStreamPerThread>>>(buffers.device_small, 2.5f);
        launched = cudaGetLastError();
    });
    launcher.join();
    REQUIRE(copied == cudaSuccess);
    REQUIRE(launched == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
}

// ---- devices and streams -----------------------------------------------------------------

TEST_CASE("cudaSetDevice does no synchronisation") {
    use_machine("hgx-h200-8");
    Buffers buffers;
    mgpu::sim::clear_trace();
    buffers.long_copy(0);
    buffers.long_kernel(0);
    CHECK(cudaSetDevice(1) == cudaSuccess);
    const double after_switch = mgpu::sim::host_now_us();
    CHECK(cudaSetDevice(0) == cudaSuccess);
    const double after_switch_back = mgpu::sim::host_now_us();
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto kernel = only_op(OpKind::Kernel);
    CHECK(after_switch < kernel.end_us);
    CHECK(after_switch_back < kernel.end_us);
}

TEST_CASE("a kernel launched into a stream of a device that is not current fails and does not run") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    cudaStream_t stream_of_one = make_stream(cudaStreamDefault);
    float* on_one = nullptr;
    REQUIRE(cudaMalloc(&on_one, sizeof(float)) == cudaSuccess);
    const float original = 0.75f;
    REQUIRE(cudaMemcpy(on_one, &original, sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);

    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    write_one<<<1, 1, 0, stream_of_one>>>(on_one, 9.0f);
    // The Programming Guide documents the failure; the code is the runtime's answer to a handle that
    // does not belong to the current device (two GPUs are needed to see it, so the H200 could not).
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);   // a launch error is not sticky

    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream_of_one) == cudaSuccess);
    float after = 0.0f;
    REQUIRE(cudaMemcpy(&after, on_one, sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(after == original);
    // The same launch with device 1 current works.
    write_one<<<1, 1, 0, stream_of_one>>>(on_one, 9.0f);
    CHECK(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream_of_one) == cudaSuccess);
    REQUIRE(cudaMemcpy(&after, on_one, sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(after == 9.0f);
    CHECK(cudaStreamDestroy(stream_of_one) == cudaSuccess);
}

TEST_CASE("cudaStreamGetDevice reports the device that was current when the stream was created") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(6) == cudaSuccess);
    cudaStream_t stream = make_stream(cudaStreamNonBlocking);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    int device = -1;
    CHECK(cudaStreamGetDevice(stream, &device) == cudaSuccess);
    CHECK(device == 6);
    unsigned flags = 99;
    CHECK(cudaStreamGetFlags(stream, &flags) == cudaSuccess);
    CHECK(flags == cudaStreamNonBlocking);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
