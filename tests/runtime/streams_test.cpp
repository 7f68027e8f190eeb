// Streams, events, schedules and modelled time.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "runtime_test_support.h"

using runtime_test::bring_up;
using runtime_test::launch;

namespace {

// A kernel that sets every element of x (n elements) to value.
cudaError_t fill(int* x, int n, int value, cudaStream_t stream) {
    return launch("fill", 1, 1, stream, {x}, [=] { std::fill(x, x + n, value); });
}

}  // namespace

TEST_CASE("under lazy, results the host never waited for are stale until it synchronises") {
    bring_up("h200", "lazy");
    int* d = nullptr;
    int* pinned = nullptr;
    REQUIRE(cudaMalloc(&d, 16 * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, 16 * sizeof(int)) == cudaSuccess);
    std::fill(pinned, pinned + 16, -1);
    cudaStream_t s;
    REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
    CHECK(fill(d, 16, 7, s) == cudaSuccess);
    CHECK(cudaMemcpyAsync(pinned, d, 16 * sizeof(int), cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(pinned[0] == -1);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(pinned[0] == 7);
    CHECK(pinned[15] == 7);
    cudaStreamDestroy(s);
    cudaFreeHost(pinned);
    cudaFree(d);
}

TEST_CASE("under eager the same copy has landed when the call returns") {
    bring_up("h200", "eager");
    int* d = nullptr;
    int* pinned = nullptr;
    REQUIRE(cudaMalloc(&d, 4 * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMallocHost(&pinned, 4 * sizeof(int)) == cudaSuccess);
    cudaStream_t s;
    cudaStreamCreate(&s);
    fill(d, 4, 3, s);
    cudaMemcpyAsync(pinned, d, 4 * sizeof(int), cudaMemcpyDeviceToHost, s);
    CHECK(pinned[3] == 3);
    cudaStreamDestroy(s);
}

TEST_CASE("a missing event dependency between streams shows under lazy; cudaStreamWaitEvent fixes it") {
    for (bool with_event : {false, true}) {
        CAPTURE(with_event);
        bring_up("h200", "lazy");
        int* d = nullptr;
        int* pinned = nullptr;
        REQUIRE(cudaMalloc(&d, sizeof(int)) == cudaSuccess);
        REQUIRE(cudaMallocHost(&pinned, sizeof(int)) == cudaSuccess);
        cudaMemset(d, 0, sizeof(int));
        *pinned = 41;
        cudaStream_t copy_stream, work_stream;
        cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking);
        cudaStreamCreateWithFlags(&work_stream, cudaStreamNonBlocking);
        cudaEvent_t arrived;
        cudaEventCreateWithFlags(&arrived, cudaEventDisableTiming);
        cudaMemcpyAsync(d, pinned, sizeof(int), cudaMemcpyHostToDevice, copy_stream);
        cudaEventRecord(arrived, copy_stream);
        if (with_event) cudaStreamWaitEvent(work_stream, arrived, 0);
        int seen = -1;
        launch("consume", 1, 1, work_stream, {d}, [&seen, d] { seen = *d + 1; });
        cudaDeviceSynchronize();
        CHECK(seen == (with_event ? 42 : 1));
    }
}

TEST_CASE("the legacy default stream waits for blocking streams, not for non-blocking ones") {
    for (unsigned flags : {cudaStreamDefault, cudaStreamNonBlocking}) {
        CAPTURE(flags);
        bring_up("h200", "lazy");
        int* d = nullptr;
        REQUIRE(cudaMalloc(&d, sizeof(int)) == cudaSuccess);
        cudaMemset(d, 0, sizeof(int));
        cudaDeviceSynchronize();
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, flags);
        fill(d, 1, 5, s);
        int host = -1;
        cudaMemcpy(&host, d, sizeof(int), cudaMemcpyDeviceToHost);
        CHECK(host == (flags == cudaStreamDefault ? 5 : 0));
        cudaStreamDestroy(s);
    }
}

TEST_CASE("cudaStreamQuery's 600 is an answer, not a stored error") {
    bring_up("h200");
    cudaStream_t s;
    cudaStreamCreate(&s);
    // 2^28 threads of 8 bytes at 2.74 TB/s: about 0.78 ms on the modelled device.
    launch("long", dim3(1u << 18), 1024, s, {}, [] {});
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaStreamQuery(s) == cudaSuccess);
}

TEST_CASE("cudaEventElapsedTime gives the modelled kernel time") {
    bring_up("h200");
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    launch("long", dim3(1u << 18), 1024, nullptr, {}, [] {});
    cudaEventRecord(stop);
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop) == cudaErrorNotReady);
    REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
    REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
    const double expected_ms = (1u << 28) * 8.0 / 2.74e12 * 1e3;
    CHECK(std::fabs(ms - expected_ms) < 0.01);
    cudaEvent_t untimed;
    cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming);
    cudaEventRecord(untimed);
    cudaEventSynchronize(untimed);
    CHECK(cudaEventElapsedTime(&ms, start, untimed) == cudaErrorInvalidResourceHandle);
}

TEST_CASE("a kernel and a pinned copy on two non-default streams overlap; on one stream they do not") {
    for (bool same_stream : {false, true}) {
        CAPTURE(same_stream);
        bring_up("h200");
        char* d = nullptr;
        char* pinned = nullptr;
        const size_t bytes = 1 << 20;
        cudaMalloc(&d, 2 * bytes);
        cudaMallocHost(&pinned, bytes);
        cudaStream_t a, b;
        cudaStreamCreate(&a);
        cudaStreamCreate(&b);
        launch("busy", dim3(1u << 16), 1024, a, {}, [] {});
        cudaMemcpyAsync(pinned, d + bytes, bytes, cudaMemcpyDeviceToHost, same_stream ? a : b);
        cudaDeviceSynchronize();
        auto kernels = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::Kernel);
        auto copies = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::MemcpyDtoH);
        REQUIRE(kernels.size() == 1);
        REQUIRE(copies.size() == 1);
        CHECK(mgpu::trace::overlaps(*kernels[0], *copies[0]) == !same_stream);
    }
}

TEST_CASE("a pageable device-to-host cudaMemcpyAsync blocks the host until the copy ends") {
    bring_up("h200");
    int* d = nullptr;
    cudaMalloc(&d, 1024);
    std::vector<int> host(256);
    cudaStream_t s;
    cudaStreamCreate(&s);
    launch("busy", dim3(1u << 16), 1024, s, {}, [] {});
    cudaMemcpyAsync(host.data(), d, 1024, cudaMemcpyDeviceToHost, s);
    auto copies = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::MemcpyDtoH);
    REQUIRE(copies.size() == 1);
    CHECK(mgpu::sim::host_now_us() >= copies[0]->end_us);
}

TEST_CASE("launching into a stream of another device fails with 400") {
    bring_up("hgx-h200-8");
    cudaSetDevice(1);
    cudaStream_t on_one;
    REQUIRE(cudaStreamCreate(&on_one) == cudaSuccess);
    cudaSetDevice(0);
    CHECK(launch("misplaced", 1, 1, on_one, {}, [] {}) == cudaErrorInvalidResourceHandle);
    CHECK(cudaGetLastError() == cudaErrorInvalidResourceHandle);
}

TEST_CASE("stream 0 is the per-thread default stream when compiled for it") {
    bring_up("h200", "lazy");
    int* d = nullptr;
    cudaMalloc(&d, sizeof(int));
    int value = 9, back = 0;
    CHECK(mgpu_ptds_cudaMemcpyAsync(d, &value, sizeof(int), cudaMemcpyHostToDevice, 0) == cudaSuccess);
    CHECK(mgpu_ptds_cudaMemcpy(&back, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back == 9);
    auto copies = mgpu::sim::trace().ops_of(mgpu::trace::OpKind::MemcpyHtoD);
    REQUIRE(copies.size() == 1);
    CHECK(copies[0]->stream == mgpu::trace::kPerThreadStream);
}

TEST_CASE("host threads keep their own current device and last error") {
    bring_up("hgx-h200-8");
    std::vector<int> seen(4, -1);
    std::vector<cudaError_t> errors(4, cudaErrorUnknown);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t, &seen, &errors] {
            cudaSetDevice(t);
            int* d = nullptr;
            cudaMalloc(&d, 64);
            cudaMemset(d, t, 64);
            unsigned char back = 0;
            cudaMemcpy(&back, d, 1, cudaMemcpyDeviceToHost);
            cudaPointerAttributes attributes;
            cudaPointerGetAttributes(&attributes, d);
            seen[t] = attributes.device * 100 + back;
            if (t == 2) cudaSetDevice(99);
            errors[t] = cudaGetLastError();
            cudaFree(d);
        });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < 4; ++t) CHECK(seen[t] == t * 100 + t);
    CHECK(errors[0] == cudaSuccess);
    CHECK(errors[2] == cudaErrorInvalidDevice);
    int device = -1;
    cudaGetDevice(&device);
    CHECK(device == 0);
}

TEST_CASE("shuffle is deterministic per seed and varies across seeds") {
    auto order_for = [](const std::string& schedule) {
        bring_up("h200", schedule);
        std::vector<int> order;
        std::vector<cudaStream_t> streams(6);
        for (auto& s : streams) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        for (int i = 0; i < 6; ++i) launch("mark", 1, 1, streams[i], {}, [i, &order] { order.push_back(i); });
        cudaDeviceSynchronize();
        return order;
    };
    CHECK(order_for("shuffle:11") == order_for("shuffle:11"));
    std::vector<std::vector<int>> orders;
    for (int seed = 1; seed <= 6; ++seed) orders.push_back(order_for("shuffle:" + std::to_string(seed)));
    std::sort(orders.begin(), orders.end());
    CHECK(std::unique(orders.begin(), orders.end()) - orders.begin() > 1);
    CHECK(order_for("lazy") == std::vector<int>{5, 4, 3, 2, 1, 0});
    CHECK(order_for("eager") == std::vector<int>{0, 1, 2, 3, 4, 5});
}

// Both run on the device's own memory (tools/sim/src/runtime/memory_timeline.h): on an H200 a copy
// beside a kernel took the sum of the two alone, not the longer one.
TEST_CASE("a device-to-device copy and a kernel on two streams of one device take the sum of their times") {
    bring_up("h200");
    // Large enough that the copy's fixed cost, which does not use the memory, is under 5% of the sum.
    const std::size_t bytes = std::size_t{128} << 20;
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    REQUIRE(cudaMalloc(&a, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&c, bytes) == cudaSuccess);
    cudaStream_t copies = nullptr, kernels = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking) == cudaSuccess);
    REQUIRE(cudaStreamCreateWithFlags(&kernels, cudaStreamNonBlocking) == cudaSuccess);
    const auto copy = [&] {
        REQUIRE(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, copies) == cudaSuccess);
    };
    const auto kernel = [&] { REQUIRE(launch("touch", dim3(unsigned(bytes / 256)), 256, kernels, {c}, [] {}) == cudaSuccess); };
    // Span of the device work queued by `work`, on the trace's clock.
    const auto span_us = [](const std::function<void()>& work) {
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        mgpu::sim::clear_trace();
        work();
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        double first = 1e300, last = 0;
        for (const auto& op : mgpu::sim::trace().ops) {
            first = std::min(first, op.start_us);
            last = std::max(last, op.end_us);
        }
        return last - first;
    };
    const double copy_alone = span_us(copy);
    const double kernel_alone = span_us(kernel);
    const double together = span_us([&] {
        copy();
        kernel();
    });
    CAPTURE(copy_alone);
    CAPTURE(kernel_alone);
    CHECK(together == doctest::Approx(copy_alone + kernel_alone).epsilon(0.05));
    CHECK(together > 1.2 * std::max(copy_alone, kernel_alone));
    CHECK(cudaStreamDestroy(copies) == cudaSuccess);
    CHECK(cudaStreamDestroy(kernels) == cudaSuccess);
    for (void* p : {a, b, c}) CHECK(cudaFree(p) == cudaSuccess);
}
