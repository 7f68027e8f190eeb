// cuda-facts.md, "Peer access", the rows about kernels: access is one-way; enabling from device A
// lets kernels on A reach B's memory, present and future allocations; B reaching A needs its own
// call made with B current; a kernel dereferencing another device's memory without access faults
// (cudaDeviceSynchronize returns 700, sticky).
#include <doctest/doctest.h>

#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::kBlock;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 10007;
constexpr std::size_t kBytes = kCount * sizeof(float);
constexpr float kScale = 1.5f;
constexpr float kOffset = 0.25f;

// A buffer of random floats on `device`; the values are kept on the host for checking.
struct RemoteInput {
    float* device_ptr = nullptr;
    std::vector<float> values;
};

RemoteInput random_buffer_on(int device, unsigned seed) {
    int previous = 0;
    REQUIRE(cudaGetDevice(&previous) == cudaSuccess);
    RemoteInput input;
    input.values = conformance::random_floats(kCount, seed);
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    REQUIRE(cudaMalloc(&input.device_ptr, kBytes) == cudaSuccess);
    REQUIRE(cudaMemcpy(input.device_ptr, input.values.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaSetDevice(previous) == cudaSuccess);
    return input;
}

float* zeroed_buffer_on(int device) {
    int previous = 0;
    REQUIRE(cudaGetDevice(&previous) == cudaSuccess);
    float* p = nullptr;
    REQUIRE(cudaSetDevice(device) == cudaSuccess);
    REQUIRE(cudaMalloc(&p, kBytes) == cudaSuccess);
    REQUIRE(cudaMemset(p, 0, kBytes) == cudaSuccess);
    REQUIRE(cudaSetDevice(previous) == cudaSuccess);
    return p;
}

// Runs out = in * kScale + kOffset on the current device; returns cudaDeviceSynchronize's result.
cudaError_t run_affine(const float* in, float* out) {
    affine<<<blocks_for(kCount), kBlock>>>(in, out, kScale, kOffset, kCount);
    const cudaError_t launched = cudaGetLastError();
    if (launched != cudaSuccess) return launched;
    return cudaDeviceSynchronize();
}

void check_affine_result(const float* out, const std::vector<float>& in) {
    std::vector<float> got(kCount, 0.0f);
    REQUIRE(cudaMemcpy(got.data(), out, kBytes, cudaMemcpyDefault) == cudaSuccess);
    for (std::size_t i = 0; i < kCount; ++i) {
        CAPTURE(i);
        REQUIRE(got[i] == doctest::Approx(in[i] * kScale + kOffset).epsilon(1e-6));
    }
}

}  // namespace

TEST_CASE("enabling access from A to B lets a kernel on A read B's memory") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(1, 31);
    float* out_on_a = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(run_affine(on_b.device_ptr, out_on_a) == cudaSuccess);
    check_affine_result(out_on_a, on_b.values);
}

TEST_CASE("enabling access from A to B lets a kernel on A write B's memory") {
    use_machine("hgx-h200-8");
    const auto on_a = random_buffer_on(0, 32);
    float* out_on_b = zeroed_buffer_on(1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(run_affine(on_a.device_ptr, out_on_b) == cudaSuccess);
    check_affine_result(out_on_b, on_a.values);
}

TEST_CASE("peer access covers B's allocations made after it was enabled") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    const auto later_on_b = random_buffer_on(1, 33);
    float* out_on_a = zeroed_buffer_on(0);
    CHECK(run_affine(later_on_b.device_ptr, out_on_a) == cudaSuccess);
    check_affine_result(out_on_a, later_on_b.values);
}

TEST_CASE("access is one-way: after enabling A to B, a kernel on B reading A's memory faults with 700, sticky") {
    use_machine("hgx-h200-8");
    const auto on_a = random_buffer_on(0, 34);
    float* out_on_b = zeroed_buffer_on(1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    CHECK(run_affine(on_a.device_ptr, out_on_b) == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 64) == cudaErrorIllegalAddress);   // sticky on device 1's context
}

TEST_CASE("B reaching A needs its own cudaDeviceEnablePeerAccess made with B current") {
    use_machine("hgx-h200-8");
    const auto on_a = random_buffer_on(0, 35);
    const auto on_b = random_buffer_on(1, 36);
    float* out_on_a = zeroed_buffer_on(0);
    float* out_on_b = zeroed_buffer_on(1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(0, 0) == cudaSuccess);
    CHECK(run_affine(on_a.device_ptr, out_on_b) == cudaSuccess);
    check_affine_result(out_on_b, on_a.values);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    CHECK(run_affine(on_b.device_ptr, out_on_a) == cudaSuccess);
    check_affine_result(out_on_a, on_b.values);
}

TEST_CASE("a kernel on A dereferencing B's memory without peer access faults: cudaDeviceSynchronize returns 700") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(3, 37);
    float* out_on_a = zeroed_buffer_on(2);
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    CHECK(run_affine(on_b.device_ptr, out_on_a) == cudaErrorIllegalAddress);
}

TEST_CASE("a kernel on A reaching B's memory through a pointer inside a struct argument faults without access and works with it") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(1, 44);
    float* out_on_a = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    SUBCASE("without access: 700") {
        affine_wrapped<<<blocks_for(kCount), kBlock>>>(WrappedInput{on_b.device_ptr, kCount}, out_on_a, kScale, kOffset);
        CHECK(cudaGetLastError() == cudaSuccess);
        CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    }
    SUBCASE("with access: the right result") {
        REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
        affine_wrapped<<<blocks_for(kCount), kBlock>>>(WrappedInput{on_b.device_ptr, kCount}, out_on_a, kScale, kOffset);
        CHECK(cudaGetLastError() == cudaSuccess);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        check_affine_result(out_on_a, on_b.values);
    }
}

TEST_CASE("after cudaDeviceDisablePeerAccess, a kernel reaching the peer faults again") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(1, 38);
    float* out_on_a = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    REQUIRE(run_affine(on_b.device_ptr, out_on_a) == cudaSuccess);
    REQUIRE(cudaDeviceDisablePeerAccess(1) == cudaSuccess);
    CHECK(run_affine(on_b.device_ptr, out_on_a) == cudaErrorIllegalAddress);
}

TEST_CASE("enabling access toward C does not open B: a kernel on A reading B still faults") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(1, 39);
    float* out_on_a = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(2, 0) == cudaSuccess);
    CHECK(run_affine(on_b.device_ptr, out_on_a) == cudaErrorIllegalAddress);
}

TEST_CASE("two NVLink islands: a kernel reads its island's peer once enabled, and faults across islands where enabling gives 217") {
    use_machine("islands-2x2");
    const auto on_1 = random_buffer_on(1, 40);
    const auto on_2 = random_buffer_on(2, 41);
    float* out_on_0 = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    CHECK(run_affine(on_1.device_ptr, out_on_0) == cudaSuccess);
    check_affine_result(out_on_0, on_1.values);
    CHECK(cudaDeviceEnablePeerAccess(2, 0) == cudaErrorPeerAccessUnsupported);
    CHECK(cudaGetLastError() == cudaErrorPeerAccessUnsupported);   // clears it before the launch
    CHECK(run_affine(on_2.device_ptr, out_on_0) == cudaErrorIllegalAddress);
}

TEST_CASE("GPUs on PCIe without P2P: a kernel reading another device's memory faults") {
    use_machine("pcie-4");
    const auto on_1 = random_buffer_on(1, 42);
    float* out_on_0 = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaErrorPeerAccessUnsupported);
    REQUIRE(cudaGetLastError() == cudaErrorPeerAccessUnsupported);   // clears it before the launch
    CHECK(run_affine(on_1.device_ptr, out_on_0) == cudaErrorIllegalAddress);
}

TEST_CASE("a kernel that reaches a peer's memory through enabled access is marked as peer access in the trace") {
    use_machine("hgx-h200-8");
    const auto on_b = random_buffer_on(1, 43);
    float* out_on_a = zeroed_buffer_on(0);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaDeviceEnablePeerAccess(1, 0) == cudaSuccess);
    mgpu::sim::clear_trace();
    REQUIRE(run_affine(on_b.device_ptr, out_on_a) == cudaSuccess);
    const auto kernel = conformance::last_op_of_kind(mgpu::trace::OpKind::Kernel);
    REQUIRE(kernel.has_value());
    CHECK(kernel->peer_access);
    CHECK(kernel->device == 0);
    CHECK(kernel->error == 0);
}
