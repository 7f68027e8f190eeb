// Blocks whose threads cannot all meet at a barrier end the grid with cudaErrorLaunchFailure and
// a message that names the kernel, the block, the threads and the lines involved; so do C++
// exceptions and __trap. The next grid runs normally afterwards.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "launch_recorder.h"

namespace {

__global__ void barrier_in_both_branches(int* out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = 1;
        __syncthreads();   // @first-branch-barrier
    } else {
        out[threadIdx.x] = 2;
        __syncthreads();   // @second-branch-barrier
    }
}

__global__ void returns_before_barrier(int* out, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = 1;
    __syncthreads();   // @barrier-after-return
    out[i] += 1;
}

__global__ void diverges_in_one_block(int* out) {
    if (blockIdx.x == 2 && threadIdx.x == 5) return;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

__global__ void add_one(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] += 1; }

__global__ void sum_with_barriers(const int* in, int* out) {
    __shared__ int partial[64];
    partial[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    for (unsigned stride = 32; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = partial[0];
}

__global__ void throws_in_thread(int* out) {
    __syncthreads();
    if (threadIdx.x == 7) throw std::runtime_error("bad index");
    out[threadIdx.x] = 1;
}

__global__ void traps(int* out) {
    if (threadIdx.x == 3) __trap();
    out[threadIdx.x] = 1;
}

__global__ void shuffle_against_barrier(int* out) {
    int value = static_cast<int>(threadIdx.x);
    if (threadIdx.x < 16) value = __shfl_down_sync(0xffffffffu, value, 1);   // @shuffle-waits
    else __syncthreads();                                                    // @barrier-holds
    out[threadIdx.x] = value;
}

__global__ void shuffle_against_syncwarp(int* out) {
    int value = static_cast<int>(threadIdx.x);
    if (threadIdx.x < 16) value = __shfl_down_sync(0xffffffffu, value, 1);   // @shuffle-meets-syncwarp
    else __syncwarp();                                                       // @syncwarp-meets-shuffle
    out[threadIdx.x] = value;
}

__global__ void inner(int* out) { *out = 5; }

// Device code that launches and so needs a grid to run in the middle of its own (a mistake the
// simulator must report rather than tear down the running grid).
__global__ void launches_from_device(int* out) {
    if (threadIdx.x == 0) inner<<<1, 1>>>(out + 1);
    out[0] = 7;
}

std::string fault_message() {
    REQUIRE(kernel_test::last_fault());
    CHECK(kernel_test::last_fault()->code == cudaErrorLaunchFailure);
    return kernel_test::last_fault()->message;
}

std::string at(const std::string& marker) {
    return std::string(__FILE__) + ":" + std::to_string(kernel_test::line_of("divergence_test.cu", marker));
}

// The next grid after a fault must run as if none had happened.
void check_next_grid_runs() {
    std::vector<int> in(64), out(1, 0);
    int expected = 0;
    for (int i = 0; i < 64; ++i) expected += (in[i] = 3 * i - 50);
    sum_with_barriers<<<1, 64>>>(in.data(), out.data());
    CHECK_FALSE(kernel_test::last_fault());
    CHECK(out[0] == expected);
}

}  // namespace

TEST_CASE("threads waiting at different __syncthreads calls end the grid with both lines named") {
    std::vector<int> out(32, 0);
    barrier_in_both_branches<<<1, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("'barrier_in_both_branches'") != std::string::npos);
    CHECK(message.find("block (0,0,0)") != std::string::npos);
    CHECK(message.find("threadIdx.x 0-15 at __syncthreads() at " + at("@first-branch-barrier")) != std::string::npos);
    CHECK(message.find("threadIdx.x 16-31 at __syncthreads() at " + at("@second-branch-barrier")) != std::string::npos);
    CHECK(message.find("move it out of the if/else") != std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("threads that returned while others wait at a barrier end the grid") {
    std::vector<int> out(64, 0);
    returns_before_barrier<<<1, 32>>>(out.data(), 20);
    const std::string message = fault_message();
    CHECK(message.find("'returns_before_barrier'") != std::string::npos);
    CHECK(message.find("threadIdx.x 20-31 returned while threadIdx.x 0-19 wait at __syncthreads() at " +
                       at("@barrier-after-return")) != std::string::npos);
    CHECK(message.find("if (i < n)") != std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("a barrier that only one block gets wrong is reported for that block, after the others ran") {
    std::vector<int> out(4 * 32, 0);
    diverges_in_one_block<<<4, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("block (2,0,0)") != std::string::npos);
    CHECK(message.find("threadIdx.x 5 returned") != std::string::npos);
    for (int i = 0; i < 64; ++i) CHECK(out[i] == 1);   // blocks 0 and 1 completed
    for (int i = 96; i < 128; ++i) CHECK(out[i] == 0);  // block 3 never ran
    check_next_grid_runs();
}

TEST_CASE("a block whose threads all return without a barrier is no fault") {
    std::vector<int> out(3 * 32, 0);
    add_one<<<3, 32>>>(out.data());
    CHECK_FALSE(kernel_test::last_fault());
    for (int value : out) CHECK(value == 1);
}

TEST_CASE("a C++ exception thrown by a kernel ends the grid with the thread named") {
    std::vector<int> out(32, 0);
    throws_in_thread<<<1, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("thread (7,0,0)") != std::string::npos);
    CHECK(message.find("bad index") != std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("__trap ends the grid with cudaErrorLaunchFailure") {
    std::vector<int> out(32, 0);
    traps<<<1, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("__trap()") != std::string::npos);
    CHECK(message.find("thread (3,0,0)") != std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("lanes waiting in a shuffle for lanes held at __syncthreads end the grid") {
    std::vector<int> out(32, 0);
    shuffle_against_barrier<<<1, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("warp 0") != std::string::npos);
    CHECK(message.find("threadIdx.x 0-15 wait at __shfl_down_sync() at " + at("@shuffle-waits")) != std::string::npos);
    CHECK(message.find("threadIdx.x 16-31, which wait at __syncthreads() at " + at("@barrier-holds")) !=
          std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("lanes of one mask at different kinds of warp operation end the grid") {
    std::vector<int> out(32, 0);
    shuffle_against_syncwarp<<<1, 32>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("warp 0") != std::string::npos);
    CHECK(message.find("threadIdx.x 0-15 wait at __shfl_down_sync() at " + at("@shuffle-meets-syncwarp") +
                       " while threadIdx.x 16-31, named in the same mask, wait at __syncwarp() at " +
                       at("@syncwarp-meets-shuffle")) != std::string::npos);
    check_next_grid_runs();
}

TEST_CASE("a grid that would have to run inside a running kernel is refused; the running one completes") {
    std::vector<int> out(2, 0);
    launches_from_device<<<1, 4>>>(out.data());
    const std::string message = fault_message();
    CHECK(message.find("'inner' would have to run while kernel 'launches_from_device' is running") !=
          std::string::npos);
    CHECK(out[0] == 7);
    CHECK(out[1] == 0);
    check_next_grid_runs();
}
