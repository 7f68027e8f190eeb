// Built with CUDA_API_PER_THREAD_DEFAULT_STREAM defined, as nvcc --default-stream per-thread does
// (see meson.build). cuda-facts.md: the per-thread default stream is a normal blocking stream per
// host thread; stream 0 then means that stream, while cudaStreamLegacy keeps the legacy one.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::use_machine;
using mgpu::trace::OpKind;

namespace {

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;   // about 1.2 ms of modelled pinned copy

struct Scene {
    void* device = nullptr;
    void* pinned = nullptr;
    float* one = nullptr;
    Scene() {
        REQUIRE(cudaMalloc(&device, kCopyBytes) == cudaSuccess);
        REQUIRE(cudaMallocHost(&pinned, kCopyBytes) == cudaSuccess);
        REQUIRE(cudaMalloc(&one, sizeof(float)) == cudaSuccess);
        std::memset(pinned, 0x52, kCopyBytes);
    }
    ~Scene() {
        cudaFree(device);
        cudaFreeHost(pinned);
        cudaFree(one);
    }
    Scene(const Scene&) = delete;
    Scene& operator=(const Scene&) = delete;
    void long_copy(cudaStream_t stream) {
        REQUIRE(cudaMemcpyAsync(device, pinned, kCopyBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    }
};

mgpu::trace::DeviceOp only_op(OpKind kind) {
    const auto ops = conformance::ops_of_kind(kind);
    REQUIRE(ops.size() == 1);
    return ops.front();
}

}  // namespace

TEST_CASE("per-thread default stream: a launch without a stream goes to the calling thread's default stream") {
    use_machine("h200");
    Scene scene;
    mgpu::sim::clear_trace();
    write_one<<<1, 1>>>(scene.one, 4.0f);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).stream == mgpu::trace::kPerThreadStream);
    float value = 0.0f;
    REQUIRE(cudaMemcpy(&value, scene.one, sizeof value, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(value == 4.0f);
}

TEST_CASE("per-thread default stream: work on stream 0 does not wait for other blocking streams") {
    use_machine("h200");
    Scene scene;
    cudaStream_t blocking = nullptr;
    REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
    mgpu::sim::clear_trace();
    scene.long_copy(blocking);
    write_one<<<1, 1>>>(scene.one, 1.0f);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
    CHECK(cudaStreamDestroy(blocking) == cudaSuccess);
}

TEST_CASE("per-thread default stream: cudaStreamLegacy still waits for it, as for any blocking stream") {
    use_machine("h200");
    Scene scene;
    mgpu::sim::clear_trace();
    scene.long_copy(0);   // stream 0 is the per-thread default stream here
    write_one<<<1, 1, 0, cudaStreamLegacy>>>(scene.one, 1.0f);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto copy = only_op(OpKind::MemcpyHtoD);
    CHECK(copy.stream == mgpu::trace::kPerThreadStream);
    CHECK(only_op(OpKind::Kernel).start_us >= copy.end_us);
}

TEST_CASE("per-thread default stream: stream 0 of two host threads are two streams") {
    use_machine("h200");
    Scene scene;
    mgpu::sim::clear_trace();
    // Assertions stay on the main thread; the workers only report their results.
    cudaError_t copied = cudaErrorUnknown, launched = cudaErrorUnknown;
    std::thread copier([&] {
        copied = cudaMemcpyAsync(scene.device, scene.pinned, kCopyBytes, cudaMemcpyHostToDevice, 0);
    });
    copier.join();
    std::thread launcher([&] {
        write_one<<<1, 1>>>(scene.one, 1.0f);
        launched = cudaGetLastError();
    });
    launcher.join();
    REQUIRE(copied == cudaSuccess);
    REQUIRE(launched == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(only_op(OpKind::Kernel).start_us < only_op(OpKind::MemcpyHtoD).end_us);
}

TEST_CASE("per-thread default stream: cudaStreamSynchronize(0) waits for this thread's stream-0 work") {
    use_machine("h200");
    Scene scene;
    mgpu::sim::clear_trace();
    scene.long_copy(0);
    REQUIRE(cudaStreamSynchronize(0) == cudaSuccess);
    CHECK(mgpu::sim::host_now_us() >= only_op(OpKind::MemcpyHtoD).end_us);
}

namespace {

void mark_done(void* flag) { *static_cast<bool*>(flag) = true; }

}  // namespace

TEST_CASE("per-thread default stream: a host function queued on stream 0 runs in this thread's stream") {
    use_machine("h200", "lazy");
    Scene scene;
    bool done = false;
    scene.long_copy(nullptr);
    REQUIRE(cudaLaunchHostFunc(nullptr, mark_done, &done) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(cudaStreamPerThread) == cudaSuccess);
    CHECK(done);
}
