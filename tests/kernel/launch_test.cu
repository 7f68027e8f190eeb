// What a rewritten launch hands to the runtime core: the kernel's name as written, its address,
// the configuration, the launch site, the pointer arguments, and arguments converted to the
// kernel's parameter types and copied at the launch.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "launch_recorder.h"
#include "mgpu/sim/block_execution.h"

namespace {

__global__ void store_as_double(double value, double* out) { *out = value; }

__global__ void store_int(int value, int* out) { out[threadIdx.x] = value; }

__global__ void report_null(const float* maybe, int* out) { *out = maybe == nullptr ? 1 : 2; }

__global__ void axpy(const float* x, float* y, float a, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = a * x[i] + y[i];
}

template <class T, int Scale>
__global__ void scaled_copy(const T* in, T* out) {
    out[threadIdx.x] = in[threadIdx.x] * Scale;
}

template <class T>
__global__ void fill_deduced(T* out, T value) {
    out[threadIdx.x] = value;
}

struct Pair {
    int first;
    int second;
};
__global__ void add_pair(Pair pair, int* out) { *out = pair.first + pair.second; }

namespace scope {
__global__ void in_namespace(int* out) { *out = 42; }
}  // namespace scope

template <class T>
void launch_from_template(T* out) {
    fill_deduced<T><<<1, 4>>>(out, T(3));
}

#define LAUNCH_ONE(kernel, ...) kernel<<<1, 1>>>(__VA_ARGS__)

__global__ void sync_free(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1; }

__global__ void with_barrier(int* out) {
    __shared__ int count;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    atomicAdd(&count, 1);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = count;
}

}  // namespace

TEST_CASE("arguments are converted to the kernel's parameter types") {
    double out = 0;
    store_as_double<<<1, 1>>>(3, &out);   // an int for a double parameter
    CHECK(out == 3.0);
    int result = 0;
    report_null<<<1, 1>>>(0, &result);    // a literal 0 for a pointer parameter
    CHECK(result == 1);
    add_pair<<<1, 1>>>({20, 22}, &result);   // a braced list for a struct parameter
    CHECK(result == 42);
}

TEST_CASE("arguments are copied at the launch, not when the grid runs") {
    kernel_test::set_execution(kernel_test::Execution::Deferred);
    int value = 5;
    std::vector<int> out(2, 0);
    store_int<<<1, 2>>>(value, out.data());
    value = 7;
    kernel_test::run_deferred();
    kernel_test::set_execution(kernel_test::Execution::Immediate);
    CHECK(out == std::vector<int>{5, 5});
}

TEST_CASE("the launch hands over name, address, configuration, site and pointer arguments") {
    kernel_test::forget_launches();
    std::vector<float> x(300, 2.0f), y(300, 1.0f);
    cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x1234);
    axpy<<<dim3(3), 128, 64, stream>>>(x.data(), y.data(), 0.5f, 300);   // @axpy-launch
    REQUIRE(kernel_test::launches().size() == 1);
    const kernel_test::LaunchRecord& launch = kernel_test::launches().front();
    CHECK(launch.name == "axpy");
    CHECK(launch.function == reinterpret_cast<const void*>(&axpy));
    CHECK((launch.grid.x == 3 && launch.grid.y == 1 && launch.grid.z == 1));
    CHECK((launch.block.x == 128 && launch.block.y == 1 && launch.block.z == 1));
    CHECK(launch.dynamic_shared == 64);
    CHECK(launch.stream == stream);
    CHECK(launch.site.line == kernel_test::line_of("launch_test.cu", "@axpy-launch"));
    CHECK(std::string(launch.site.file).find("launch_test.cu") != std::string::npos);
    CHECK(launch.pointer_args == std::vector<const void*>{x.data(), y.data()});
    for (float v : y) CHECK(v == 2.0f);
}

TEST_CASE("a launch without shared memory or stream asks for 0 bytes on the default stream") {
    kernel_test::forget_launches();
    int out = 0;
    scope::in_namespace<<<1, 1>>>(&out);
    REQUIRE(kernel_test::launches().size() == 1);
    CHECK(kernel_test::launches().front().name == "scope::in_namespace");
    CHECK(kernel_test::launches().front().dynamic_shared == 0);
    CHECK(kernel_test::launches().front().stream == nullptr);
    CHECK(out == 42);
}

TEST_CASE("kernel templates launch with written or deduced template arguments") {
    kernel_test::forget_launches();
    std::vector<int> in{1, 2, 3, 4}, out(4, 0);
    scaled_copy<int, 3><<<1, 4>>>(in.data(), out.data());
    CHECK(out == std::vector<int>{3, 6, 9, 12});
    CHECK(kernel_test::launches().back().name == "scaled_copy<int, 3>");

    std::vector<double> filled(4, 0.0);
    fill_deduced<<<1, 4>>>(filled.data(), 2.5);
    CHECK(filled == std::vector<double>{2.5, 2.5, 2.5, 2.5});
    CHECK(kernel_test::launches().back().name == "fill_deduced");

    std::vector<long> from_template(4, 0);
    launch_from_template(from_template.data());
    CHECK(from_template == std::vector<long>{3, 3, 3, 3});
}

TEST_CASE("a launch written in a macro runs and records the line where the macro is used") {
    kernel_test::forget_launches();
    int out = 0;
    LAUNCH_ONE(scope::in_namespace, &out);   // @macro-launch
    CHECK(out == 42);
    REQUIRE(kernel_test::launches().size() == 1);
    CHECK(kernel_test::launches().front().site.line == kernel_test::line_of("launch_test.cu", "@macro-launch"));
}

TEST_CASE("a launch written over several lines keeps the lines after it in place") {
    kernel_test::forget_launches();
    std::vector<float> x(8, 1.0f), y(8, 0.0f);
    axpy<<<1,   // @multi-line-launch
           8>>>(x.data(),
                y.data(),
                3.0f, 8);
    const int line_after = __LINE__;   // @line-after-launch
    CHECK(line_after == kernel_test::line_of("launch_test.cu", "@line-after-launch"));
    REQUIRE(kernel_test::launches().size() == 1);
    CHECK(kernel_test::launches().front().site.line == kernel_test::line_of("launch_test.cu", "@multi-line-launch"));
    for (float v : y) CHECK(v == 3.0f);
}

TEST_CASE("fibers are kept for later grids: one for a grid without barriers, one per thread with them") {
    // A new host thread starts with no fibers of its own.
    std::size_t after_sync_free = 0, after_barriers = 0, after_second_grid = 0;
    std::vector<int> out(4 * 64, 0);
    std::thread([&] {
        sync_free<<<4, 64>>>(out.data());
        after_sync_free = mgpu::sim::kernel::pooled_fibers();
        with_barrier<<<4, 64>>>(out.data());
        after_barriers = mgpu::sim::kernel::pooled_fibers();
        with_barrier<<<4, 64>>>(out.data());
        sync_free<<<4, 64>>>(out.data());
        after_second_grid = mgpu::sim::kernel::pooled_fibers();
    }).join();
    CHECK(after_sync_free == 1);
    CHECK(after_barriers == 64);
    CHECK(after_second_grid == 64);
    for (int v : out) CHECK(v == 1);
}
