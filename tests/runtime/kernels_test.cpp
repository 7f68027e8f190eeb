// Launch configuration checks and kernel faults.
#include <doctest/doctest.h>

#include "runtime_test_support.h"

using runtime_test::bring_up;
using runtime_test::launch;

namespace {
void some_kernel() {}
}  // namespace

TEST_CASE("bad launch configurations give 1, as the hardware does") {
    bring_up("h200");
    bool ran = false;
    auto body = [&] { ran = true; };
    CHECK(launch("k", 1, 2048, nullptr, {}, body) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(launch("k", 0, 32, nullptr, {}, body) == cudaErrorInvalidValue);
    CHECK(launch("k", 1, dim3(1, 1, 65), nullptr, {}, body) == cudaErrorInvalidValue);
    CHECK(launch("k", dim3(1, 65536), 32, nullptr, {}, body) == cudaErrorInvalidValue);
    CHECK(launch("k", 1, 32, nullptr, {}, body, 49153) == cudaErrorInvalidValue);
    cudaDeviceSynchronize();
    CHECK_FALSE(ran);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(launch("k", 1, 1024, nullptr, {}, body, 49152) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(ran);
}

TEST_CASE("cudaFuncSetAttribute raises the dynamic shared memory limit up to the opt-in size") {
    bring_up("h200");
    const void* function = reinterpret_cast<const void*>(&some_kernel);
    CHECK(launch("k", 1, 32, nullptr, {}, [] {}, 100000, function) == cudaErrorInvalidValue);
    CHECK(cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000) == cudaSuccess);
    CHECK(launch("k", 1, 32, nullptr, {}, [] {}, 100000, function) == cudaSuccess);
    CHECK(cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, 232449) ==
          cudaErrorInvalidValue);
    cudaGetLastError();
}

TEST_CASE("a fault raised by the running grid is sticky until cudaDeviceReset") {
    bring_up("h200");
    runtime_test::StderrCapture capture;
    CHECK(launch("diverges", 1, 64, nullptr, {}, [] {
              throw mgpu::sim::KernelFault{cudaErrorLaunchFailure, "threads of one block disagreed at a barrier"};
          }) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    CHECK(capture.text().find("disagreed at a barrier") != std::string::npos);
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 8) == cudaErrorLaunchFailure);
    CHECK(cudaDeviceReset() == cudaSuccess);
    CHECK(cudaMalloc(&p, 8) == cudaSuccess);
}

TEST_CASE("a kernel given ordinary host memory faults with 700") {
    bring_up("h200");
    int host_value = 0;
    runtime_test::StderrCapture capture;
    CHECK(launch("reads_host", 1, 1, nullptr, {&host_value}, [] {}) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(capture.text().find("host memory") != std::string::npos);
    cudaDeviceReset();
}
