// Kernels through the real runtime (sim_dep), as a student's program runs them: device memory,
// a barrier-heavy reduction, a divergent barrier reported by cudaDeviceSynchronize, and a memory
// fault inside a kernel whose threads wait at barriers (the memory guard abandons the running
// fiber) followed by kernels that run normally again.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "block_sums.cuh"
#include "mgpu/sim/control.h"

namespace {

constexpr unsigned kThreads = 256;

__global__ void early_return(int* out, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __syncthreads();   // @runtime-divergent-barrier
    out[i] = 1;
}

// Reads through an address handed over as a number, so the launch cannot see it is a pointer:
// the access itself faults, in the middle of a block whose other threads wait at a barrier.
__global__ void read_after_barrier(std::uintptr_t address, int* out) {
    __shared__ int staged[kThreads];
    staged[threadIdx.x] = static_cast<int>(threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 100) staged[0] = *reinterpret_cast<const int*>(address);
    __syncthreads();
    out[threadIdx.x] = staged[threadIdx.x];
}

void use_machine(const std::string& topology) {
    mgpu::sim::Options options;
    options.topology = topology;
    options.apply_cuda_visible_devices = false;
    mgpu::sim::reset_machine(options);
}

// What the process writes to stderr while it lives.
class StderrCapture {
public:
    StderrCapture() {
        std::fflush(stderr);
        saved_ = ::dup(2);
        std::FILE* file = std::tmpfile();
        file_ = file;
        ::dup2(::fileno(file), 2);
    }
    ~StderrCapture() { restore(); }
    std::string text() {
        restore();
        std::rewind(file_);
        std::ostringstream out;
        char buffer[4096];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file_)) > 0;) out.write(buffer, static_cast<std::streamsize>(n));
        return out.str();
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        saved_ = -1;
    }
    int saved_ = -1;
    std::FILE* file_ = nullptr;
};

int line_of(const std::string& marker) {
    std::ifstream in(std::string(KERNEL_TEST_SOURCE_DIR) + "/runtime_path_test.cu");
    std::string text;
    for (int line = 1; std::getline(in, text); ++line)
        if (text.find(marker) != std::string::npos) return line;
    return -1;
}

// A reduction on the current device, checked against the host's sums.
void check_block_sums(unsigned seed) {
    const unsigned n = kSumThreads * 19 + 77, blocks = (n + kSumThreads - 1) / kSumThreads;
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> value(-100000, 100000);
    std::vector<int> in(n);
    std::vector<long long> expected(blocks, 0);
    for (unsigned i = 0; i < n; ++i) expected[i / kSumThreads] += in[i] = value(random);

    int* d_in = nullptr;
    long long* d_out = nullptr;
    REQUIRE(cudaMalloc(&d_in, n * sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMalloc(&d_out, blocks * sizeof(long long)) == cudaSuccess);
    REQUIRE(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
    block_sums<<<blocks, kSumThreads>>>(d_in, d_out, n);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    std::vector<long long> out(blocks, 0);
    REQUIRE(cudaMemcpy(out.data(), d_out, blocks * sizeof(long long), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(out == expected);
    CHECK(cudaFree(d_in) == cudaSuccess);
    CHECK(cudaFree(d_out) == cudaSuccess);
}

}  // namespace

TEST_CASE("a block reduction with barriers gives exact sums through the runtime") {
    use_machine("h200");
    check_block_sums(11);
}

TEST_CASE("a divergent barrier makes cudaDeviceSynchronize return cudaErrorLaunchFailure with the line named") {
    use_machine("h200");
    int* d_out = nullptr;
    REQUIRE(cudaMalloc(&d_out, 64 * sizeof(int)) == cudaSuccess);
    StderrCapture capture;   // the grid may run at the launch or at the synchronisation
    early_return<<<2, 32>>>(d_out, 40);   // block 1 has threads 8..31 past the end
    CHECK(cudaGetLastError() == cudaSuccess);
    const cudaError_t status = cudaDeviceSynchronize();
    const std::string message = capture.text();
    CHECK(status == cudaErrorLaunchFailure);
    CHECK(message.find("'early_return'") != std::string::npos);
    CHECK(message.find("block (1,0,0)") != std::string::npos);
    CHECK(message.find("runtime_path_test.cu:" + std::to_string(line_of("@runtime-divergent-barrier"))) !=
          std::string::npos);

    use_machine("h200");
    check_block_sums(12);
}

TEST_CASE("after a memory fault in a block waiting at barriers, later kernels run normally") {
    use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    int* on_one = nullptr;
    REQUIRE(cudaMalloc(&on_one, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    int* d_out = nullptr;
    REQUIRE(cudaMalloc(&d_out, kThreads * sizeof(int)) == cudaSuccess);
    StderrCapture capture;
    read_after_barrier<<<1, kThreads>>>(reinterpret_cast<std::uintptr_t>(on_one), d_out);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(capture.text().find("read_after_barrier") != std::string::npos);

    use_machine("hgx-h200-8");
    check_block_sums(13);
    check_block_sums(14);
}
