// Kernel parameters of every type a kernel may take, passed as CUDA passes them (copied at the
// launch): a volatile pointer the host writes through, default arguments left out at the launch
// (as cuda-samples' p2pBandwidthLatencyTest launches its `delay` kernel), const pointers, structs
// by value and templates, with and without explicit template arguments.
#include <doctest/doctest.h>

#include <vector>

#include "conformance_support.h"

using conformance::use_machine;

namespace {

struct Affine {
    float scale;
    float offset;
};

}  // namespace

// Waits (up to timeout_clocks) for the host to raise the flag, then says what it saw.
__global__ void wait_for_flag(volatile int* flag, int* seen, unsigned long long timeout_clocks = 10000000) {
    const long long start = clock64();
    while (*flag == 0 && clock64() - start < static_cast<long long>(timeout_clocks)) {
    }
    *seen = *flag;
}

__global__ void add_amount(int* total, int amount = 5, int times = 1) {
    if (threadIdx.x == 0) *total += amount * times;
}

__global__ void apply_affine(Affine f, const float* __restrict__ in, float* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f.scale * in[i] + f.offset;
}

__global__ void sum_through_const(int const* const values, int* const total, int n) {
    if (threadIdx.x == 0)
        for (int i = 0; i < n; ++i) *total += values[i];
}

template <class T, int Repeat>
__global__ void fill_repeated(T* out, T value) {
    for (int r = 0; r < Repeat; ++r) out[threadIdx.x * Repeat + r] = value;
}

template <class T>
__global__ void scale_values(T* values, T factor) {
    values[threadIdx.x] *= factor;
}

TEST_CASE("a kernel polls a volatile flag the host raised, its timeout left to the default argument") {
    use_machine("h200");
    int* flag = nullptr;
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&flag), sizeof(int), cudaHostAllocPortable) == cudaSuccess);
    int* seen = nullptr;
    REQUIRE(cudaMalloc(&seen, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemset(seen, 0, sizeof(int)) == cudaSuccess);
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    volatile int* raised = flag;
    *raised = 42;
    wait_for_flag<<<1, 1, 0, stream>>>(raised, seen);
    CHECK(cudaGetLastError() == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    int got = 0;
    REQUIRE(cudaMemcpy(&got, seen, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(got == 42);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(cudaFree(seen) == cudaSuccess);
    CHECK(cudaFreeHost(flag) == cudaSuccess);
}

TEST_CASE("arguments left out of a launch take the kernel's default arguments") {
    use_machine("h200");
    int* total = nullptr;
    REQUIRE(cudaMalloc(&total, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemset(total, 0, sizeof(int)) == cudaSuccess);
    add_amount<<<1, 32>>>(total);          // +5
    add_amount<<<1, 32>>>(total, 2);       // +2
    add_amount<<<1, 32>>>(total, 3, 10);   // +30
    CHECK(cudaGetLastError() == cudaSuccess);
    int got = 0;
    REQUIRE(cudaMemcpy(&got, total, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(got == 37);
    CHECK(cudaFree(total) == cudaSuccess);
}

TEST_CASE("a struct passed by value, const and __restrict__ pointers reach the kernel as written") {
    use_machine("h200");
    constexpr int kCount = 300;
    const std::vector<float> values = conformance::random_floats(kCount, 77);
    float* in = nullptr;
    float* out = nullptr;
    REQUIRE(cudaMalloc(&in, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMalloc(&out, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(in, values.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    Affine f{2.0f, 0.25f};
    apply_affine<<<2, 256>>>(f, in, out, kCount);
    f.scale = 100.0f;   // the launch copied the struct: changing it now changes nothing
    std::vector<float> got(kCount);
    REQUIRE(cudaMemcpy(got.data(), out, kCount * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int i = 0; i < kCount; ++i) {
        CAPTURE(i);
        REQUIRE(got[i] == 2.0f * values[i] + 0.25f);
    }

    const std::vector<int> numbers = {3, 1, 4, 1, 5, 9, 2, 6};
    int* device_numbers = nullptr;
    int* total = nullptr;
    REQUIRE(cudaMalloc(&device_numbers, numbers.size() * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMalloc(&total, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemcpy(device_numbers, numbers.data(), numbers.size() * sizeof(int), cudaMemcpyHostToDevice) ==
            cudaSuccess);
    REQUIRE(cudaMemset(total, 0, sizeof(int)) == cudaSuccess);
    const int* const read_only = device_numbers;
    sum_through_const<<<1, 1>>>(read_only, total, static_cast<int>(numbers.size()));
    int sum = 0;
    REQUIRE(cudaMemcpy(&sum, total, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(sum == 31);
    for (void* p : {static_cast<void*>(in), static_cast<void*>(out), static_cast<void*>(device_numbers),
                    static_cast<void*>(total)})
        CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("kernel templates launch with explicit template arguments and with deduced ones") {
    use_machine("h200");
    constexpr int kThreads = 64;
    double* filled = nullptr;
    REQUIRE(cudaMalloc(&filled, kThreads * 3 * sizeof(double)) == cudaSuccess);
    fill_repeated<double, 3><<<1, kThreads>>>(filled, 1.5);
    scale_values<<<1, kThreads * 3>>>(filled, 4.0);   // T deduced as double
    std::vector<double> got(kThreads * 3);
    REQUIRE(cudaMemcpy(got.data(), filled, got.size() * sizeof(double), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(got == std::vector<double>(kThreads * 3, 6.0));
    CHECK(cudaFree(filled) == cudaSuccess);
}
