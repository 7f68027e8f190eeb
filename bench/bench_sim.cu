// bench-sim: the simulator's own speed and memory, measured in one run through the real launch
// path (cu2cpp-rewritten launches, the runtime core, the memory guard and the block scheduler):
//   (a) an element-wise kernel over 2^24 floats against the same loop in plain C++;
//   (b) a block reduction with __syncthreads, 256 threads a block over 2^22 elements, in
//       nanoseconds per thread per barrier;
//   (c) the peak resident memory (VmHWM) after cudaMalloc + cudaMemset of 1 GiB on each device
//       of hgx-h200-8, as a ratio to the 8 GiB touched.
// Times are the process's CPU time (the best of several runs), so that other work on a shared
// machine does not count against the simulator. Each figure is printed as
// `name: value (target ...) PASS|MISS`; the exit status is 1 when a figure misses its target.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "mgpu/sim/control.h"

namespace {

constexpr int kRepeats = 5;
constexpr unsigned kThreads = 256;

__global__ void scale_add(const float* x, float* y, float a, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = a * x[i] + y[i];
}

[[gnu::noinline]] void plain_scale_add(const float* x, float* y, float a, int n) {
    for (int i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

// One __syncthreads after the load and one per halving step: 1 + log2(256) = 9 per thread.
constexpr int kBarriersPerThread = 9;

__global__ void block_sum(const float* in, float* out) {
    __shared__ float partial[kThreads];
    const unsigned t = threadIdx.x;
    partial[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = partial[0];
}

double now_ms() {
    timespec now{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

void check(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "bench-sim: %s failed with error %d\n", what, static_cast<int>(status));
    std::exit(2);
}

void use_machine(const char* topology) {
    mgpu::sim::Options options;
    options.topology = topology;
    options.apply_cuda_visible_devices = false;
    mgpu::sim::reset_machine(options);
}

bool report(const char* name, double value, const char* comparison, double target) {
    const bool pass = comparison[0] == '>' ? value >= target : value <= target;
    std::printf("%s: %.3g (target %s %g) %s\n", name, value, comparison, target, pass ? "PASS" : "MISS");
    std::fflush(stdout);
    return pass;
}

// A kilobyte figure from /proc/self/status or /proc/meminfo, in bytes.
double proc_kilobytes(const char* file, const char* key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::atof(line.c_str() + std::strlen(key)) * 1024.0;
    return 0.0;
}

bool elementwise() {
    const int n = 1 << 24;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 1000) * 0.5f;
        y[i] = static_cast<float>(i % 7);
    }
    float* d_x = nullptr;
    float* d_y = nullptr;
    check(cudaMalloc(&d_x, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_y, n * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");

    const unsigned blocks = (n + kThreads - 1) / kThreads;
    double simulator = 1e300, plain = 1e300;
    for (int r = 0; r <= kRepeats; ++r) {   // round 0 warms both up
        double start = now_ms();
        scale_add<<<blocks, kThreads>>>(d_x, d_y, 2.0f, n);
        check(cudaDeviceSynchronize(), "the element-wise kernel");
        if (r > 0) simulator = std::min(simulator, now_ms() - start);
        start = now_ms();
        plain_scale_add(x.data(), y.data(), 2.0f, n);
        if (r > 0) plain = std::min(plain, now_ms() - start);
    }
    std::vector<float> result(n);
    check(cudaMemcpy(result.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (result != y) {
        std::fprintf(stderr, "bench-sim: the element-wise kernel computed a different result than the loop\n");
        std::exit(2);
    }
    check(cudaFree(d_x), "cudaFree");
    check(cudaFree(d_y), "cudaFree");
    std::printf("elementwise_simulator_ms: %.2f\nelementwise_plain_cpp_ms: %.2f\n", simulator, plain);
    return report("elementwise_speed_vs_plain_cpp", plain / simulator, ">=", 0.5);
}

bool barrier_reduction() {
    const unsigned n = 1u << 22, blocks = n / kThreads;
    std::vector<float> in(n);
    std::vector<float> expected(blocks, 0.0f);
    for (unsigned i = 0; i < n; ++i) expected[i / kThreads] += in[i] = static_cast<float>(i % 97);
    float* d_in = nullptr;
    float* d_out = nullptr;
    check(cudaMalloc(&d_in, n * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&d_out, blocks * sizeof(float)), "cudaMalloc");
    check(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");

    double best = 1e300;
    for (int r = 0; r <= kRepeats; ++r) {
        const double start = now_ms();
        block_sum<<<blocks, kThreads>>>(d_in, d_out);
        check(cudaDeviceSynchronize(), "the reduction kernel");
        if (r > 0) best = std::min(best, now_ms() - start);
    }
    std::vector<float> out(blocks);
    check(cudaMemcpy(out.data(), d_out, blocks * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (out != expected) {
        std::fprintf(stderr, "bench-sim: the reduction kernel computed wrong block sums\n");
        std::exit(2);
    }
    check(cudaFree(d_in), "cudaFree");
    check(cudaFree(d_out), "cudaFree");
    std::printf("barrier_reduction_ms: %.2f\n", best);
    return report("barrier_ns_per_thread_per_barrier", best * 1e6 / (static_cast<double>(n) * kBarriersPerThread),
                  "<=", 25.0);
}

bool resident_memory() {
    constexpr std::size_t kPerDevice = std::size_t{1} << 30;
    use_machine("hgx-h200-8");
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    const double needed = static_cast<double>(devices) * kPerDevice * 1.1;
    if (proc_kilobytes("/proc/meminfo", "MemAvailable:") < needed) {
        std::printf("peak_rss_ratio: skipped, it needs %.1f GiB of free memory\n", needed / (1 << 30));
        return true;
    }
    for (int d = 0; d < devices; ++d) {
        check(cudaSetDevice(d), "cudaSetDevice");
        void* p = nullptr;
        check(cudaMalloc(&p, kPerDevice), "cudaMalloc of 1 GiB");
        check(cudaMemset(p, 0x5a, kPerDevice), "cudaMemset of 1 GiB");
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    const double peak = proc_kilobytes("/proc/self/status", "VmHWM:");
    const double touched = static_cast<double>(devices) * kPerDevice;
    std::printf("peak_rss_gib: %.2f for %.0f GiB touched on %d devices\n", peak / (1 << 30), touched / (1 << 30), devices);
    return report("peak_rss_ratio", peak / touched, "<=", 1.5);
}

}  // namespace

int main(int argc, char** argv) {
    bool with_memory = true;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--skip-rss") == 0) {
            with_memory = false;
        } else {
            std::printf("usage: bench-sim [--skip-rss]\n"
                        "Measures the simulator's kernel speed and memory use; exits 1 if a figure misses its target.\n"
                        "--skip-rss leaves out the 8 GiB resident-memory measurement.\n");
            return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    use_machine("h200");
    bool all_pass = elementwise();
    all_pass = barrier_reduction() && all_pass;
    if (with_memory) all_pass = resident_memory() && all_pass;
    return all_pass ? 0 : 1;
}
