// Host work queued on streams: cudaLaunchHostFunc and cudaStreamAddCallback run in stream order
// (after the work before them, before the work after them), on a thread of the runtime's own, and
// a callback is told the stream and the status of the work before it. A runtime call made inside
// one gives cudaErrorNotPermitted (800). Invalid arguments give 1.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

struct HostStep {
    const float* source = nullptr;        // page-locked, written by the copy queued before
    float seen = 0;                       // what the host function read there
    std::thread::id thread;               // where it ran
    std::atomic<int>* order = nullptr;    // the order host steps ran in
    int position = -1;
};

void read_first_value(void* data) {
    auto* step = static_cast<HostStep*>(data);
    step->seen = step->source[0];
    step->thread = std::this_thread::get_id();
    step->position = (*step->order)++;
}

struct CallbackReport {
    cudaStream_t stream = nullptr;
    cudaError_t status = cudaErrorUnknown;
    int calls = 0;
};

void report_callback(cudaStream_t stream, cudaError_t status, void* data) {
    auto* report = static_cast<CallbackReport*>(data);
    report->stream = stream;
    report->status = status;
    ++report->calls;
}

struct CallsInside {
    cudaError_t get_device = cudaSuccess;
    cudaError_t allocate = cudaSuccess;
};

void call_the_runtime(void* data) {
    auto* calls = static_cast<CallsInside*>(data);
    int device = -1;
    calls->get_device = cudaGetDevice(&device);
    void* p = nullptr;
    calls->allocate = cudaMalloc(&p, 4);
}

}  // namespace

__global__ void set_all(float* x, float value, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}

TEST_CASE("a host function runs after the stream's earlier work, on another thread, before its later work") {
    for (const char* schedule : {"eager", "lazy", "shuffle"}) {
        CAPTURE(schedule);
        use_machine("h200", schedule);
        constexpr int kCount = 1024;
        float* device_values = nullptr;
        float* host_values = nullptr;
        REQUIRE(cudaMalloc(&device_values, kCount * sizeof(float)) == cudaSuccess);
        REQUIRE(cudaMallocHost(&host_values, kCount * sizeof(float)) == cudaSuccess);
        host_values[0] = -1.0f;
        cudaStream_t stream = nullptr;
        REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
        std::atomic<int> order{0};
        HostStep first{host_values, 0, {}, &order};
        HostStep second{host_values, 0, {}, &order};

        set_all<<<kCount / 256, 256, 0, stream>>>(device_values, 3.0f, kCount);
        REQUIRE(cudaMemcpyAsync(host_values, device_values, kCount * sizeof(float), cudaMemcpyDeviceToHost, stream) ==
                cudaSuccess);
        CHECK(cudaLaunchHostFunc(stream, read_first_value, &first) == cudaSuccess);
        set_all<<<kCount / 256, 256, 0, stream>>>(device_values, 8.0f, kCount);
        REQUIRE(cudaMemcpyAsync(host_values, device_values, kCount * sizeof(float), cudaMemcpyDeviceToHost, stream) ==
                cudaSuccess);
        CHECK(cudaLaunchHostFunc(stream, read_first_value, &second) == cudaSuccess);
        REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);

        CHECK(first.seen == 3.0f);
        CHECK(second.seen == 8.0f);
        CHECK(first.position == 0);
        CHECK(second.position == 1);
        CHECK(first.thread != std::this_thread::get_id());
        CHECK(second.thread != std::this_thread::get_id());
        CHECK(cudaStreamDestroy(stream) == cudaSuccess);
        CHECK(cudaFreeHost(host_values) == cudaSuccess);
        CHECK(cudaFree(device_values) == cudaSuccess);
    }
}

TEST_CASE("a stream callback is told its stream and cudaSuccess, and runs in order on the legacy stream too") {
    use_machine("h200");
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    CallbackReport on_stream;
    CHECK(cudaStreamAddCallback(stream, report_callback, &on_stream, 0) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(on_stream.calls == 1);
    CHECK(on_stream.stream == stream);
    CHECK(on_stream.status == cudaSuccess);

    CallbackReport on_legacy;
    CHECK(cudaStreamAddCallback(nullptr, report_callback, &on_legacy, 0) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(on_legacy.calls == 1);
    CHECK(on_legacy.stream == nullptr);
    CHECK(on_legacy.status == cudaSuccess);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("cudaStreamAddCallback with flags other than 0, or no function, gives 1; cudaLaunchHostFunc without one too") {
    use_machine("h200");
    CallbackReport report;
    CHECK(cudaStreamAddCallback(nullptr, report_callback, &report, 1) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaStreamAddCallback(nullptr, nullptr, &report, 0) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaLaunchHostFunc(nullptr, nullptr, nullptr) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(report.calls == 0);
}

TEST_CASE("runtime calls inside a host function give cudaErrorNotPermitted (800)") {
    use_machine("h200");
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    CallsInside calls;
    REQUIRE(cudaLaunchHostFunc(stream, call_the_runtime, &calls) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(calls.get_device == cudaErrorNotPermitted);
    CHECK(calls.allocate == cudaErrorNotPermitted);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
}
