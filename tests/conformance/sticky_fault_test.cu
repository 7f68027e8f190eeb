// cuda-facts.md, "Errors and the last error": a kernel that faults. The launch returns 0;
// cudaDeviceSynchronize returns 700; cudaGetLastError returns 700 once, then 0; every later call
// that uses the device context keeps returning 700; cudaDeviceCanAccessPeer still answers;
// cudaDeviceReset recovers. The fault is the documented one: a kernel on device 0 dereferencing
// device 1's memory without peer access.
#include <doctest/doctest.h>

#include <vector>

#include "conformance_kernels.cuh"
#include "conformance_support.h"

using conformance::blocks_for;
using conformance::kBlock;
using conformance::use_machine;

namespace {

constexpr std::size_t kCount = 4099;

// Allocates `kCount` random floats on device 1 and an output on device 0, then (device 0 current)
// launches a kernel on device 0 that reads device 1's buffer. Returns the launch's own result.
cudaError_t launch_faulting_kernel() {
    const auto input = conformance::random_floats(kCount, 700);
    float* on_one = nullptr;
    float* on_zero = nullptr;
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    REQUIRE(cudaMalloc(&on_one, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(on_one, input.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    REQUIRE(cudaMalloc(&on_zero, kCount * sizeof(float)) == cudaSuccess);
    affine<<<blocks_for(kCount), kBlock>>>(on_one, on_zero, 2.0f, 1.0f, kCount);
    return cudaGetLastError();
}

// A correct computation on the current device: must succeed after recovery.
void check_device_computes() {
    const auto input = conformance::random_floats(kCount, 71);
    float* in = nullptr;
    float* out = nullptr;
    REQUIRE(cudaMalloc(&in, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMalloc(&out, kCount * sizeof(float)) == cudaSuccess);
    REQUIRE(cudaMemcpy(in, input.data(), kCount * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    affine<<<blocks_for(kCount), kBlock>>>(in, out, 3.0f, -1.0f, kCount);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<float> output(kCount, 0.0f);
    REQUIRE(cudaMemcpy(output.data(), out, kCount * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (std::size_t i = 0; i < kCount; ++i) {
        CAPTURE(i);
        REQUIRE(output[i] == doctest::Approx(input[i] * 3.0f - 1.0f).epsilon(1e-6));
    }
    CHECK(cudaFree(in) == cudaSuccess);
    CHECK(cudaFree(out) == cudaSuccess);
}

}  // namespace

TEST_CASE("a kernel that faults: the launch returns 0") {
    use_machine("hgx-h200-8");
    CHECK(launch_faulting_kernel() == cudaSuccess);
}

TEST_CASE("a kernel that faults: cudaDeviceSynchronize returns 700") {
    use_machine("hgx-h200-8");
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
}

TEST_CASE("a kernel that faults: cudaGetLastError returns 700 once, then 0") {
    use_machine("hgx-h200-8");
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("a kernel that faults: every later call that uses the device context keeps returning 700") {
    use_machine("hgx-h200-8");
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    REQUIRE(cudaGetLastError() == cudaErrorIllegalAddress);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1024) == cudaErrorIllegalAddress);
    CHECK(cudaMalloc(&p, 1024) == cudaErrorIllegalAddress);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    float host = 1.0f;
    CHECK(cudaMemcpy(p, &host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaMalloc(&p, 1024) == cudaErrorIllegalAddress);
}

TEST_CASE("a kernel that faults: cudaDeviceCanAccessPeer still answers") {
    use_machine("hgx-h200-8");
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    int can = -1;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaSuccess);
    CHECK(can == 1);
}

TEST_CASE("a kernel that faults: cudaDeviceReset recovers the device") {
    use_machine("hgx-h200-8");
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);   // the 700 the synchronisation stored
    CHECK(cudaDeviceReset() == cudaSuccess);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1024) == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    check_device_computes();
}

TEST_CASE("a kernel that faults is recorded in the trace with the code it raised") {
    use_machine("hgx-h200-8");
    mgpu::sim::clear_trace();
    REQUIRE(launch_faulting_kernel() == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    const auto kernel = conformance::last_op_of_kind(mgpu::trace::OpKind::Kernel);
    REQUIRE(kernel.has_value());
    CHECK(kernel->error == 700);
    CHECK(kernel->device == 0);
}
