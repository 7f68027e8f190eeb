// simple-p2p: the whole peer-to-peer flow of lesson 3 in one program.
// Lists which GPUs can reach which, opens access both ways on the first pair that can peer,
// times 64 MiB ping-pong copies between the two, lets a kernel on each GPU read the other's
// buffer, checks the numbers, and closes access again. Where no pair can peer, the copies and
// kernels still run, staged through host memory. Exit status: 0 passed, 1 failed, 2 waived
// (fewer than two GPUs).
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

namespace {

constexpr int exit_waived = 2;
constexpr std::size_t buffer_floats = std::size_t(16) << 20;   // 64 MiB of floats
constexpr int ping_pong_copies = 32;

// Stops with the failing call, where it is and why: a sample has nothing sensible to do after one.
void check(cudaError_t status, const char* call, int line)
{
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "simple_p2p.cu:%d: %s failed with %d (%s): %s\nTest failed\n", line, call,
                 static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
    std::exit(EXIT_FAILURE);
}
#define CHECK(call) check((call), #call, __LINE__)

__global__ void times_two(float* dst, const float* src, std::size_t n)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = 2.0f * src[i];
}

// A kernel on `device` writes 2 * input into `output` (both buffers of buffer_floats). With peer access
// it reads `input` on the other GPU directly; without it, the input comes over first into `scratch`.
void run_times_two(int device, float* output, const float* input, int input_device, float* scratch, bool peer)
{
    if (peer)
        std::printf("Kernel on GPU%d reads GPU%d's buffer directly.\n", device, input_device);
    else
        std::printf("Kernel on GPU%d doubles a copy of GPU%d's buffer.\n", device, input_device);
    CHECK(cudaSetDevice(device));
    const float* source = input;
    if (!peer) {
        CHECK(cudaMemcpyPeer(scratch, device, input, input_device, buffer_floats * sizeof(float)));
        source = scratch;
    }
    times_two<<<1024, 256>>>(output, source, buffer_floats);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
}

}  // namespace

int main()
{
    int device_count = 0;
    CHECK(cudaGetDeviceCount(&device_count));
    std::printf("simple-p2p: %d CUDA device%s\n", device_count, device_count == 1 ? "" : "s");
    if (device_count < 2) {
        std::printf("Two or more GPUs are needed for peer-to-peer copies; waived.\n");
        return exit_waived;
    }

    for (int device = 0; device < device_count; ++device) {
        cudaDeviceProp properties{};
        CHECK(cudaGetDeviceProperties(&properties, device));
        std::printf("  GPU%d: %s\n", device, properties.name);
    }

    // Every ordered pair: access is asked for, and granted, one direction at a time.
    int first = -1, second = -1;
    for (int from = 0; from < device_count; ++from)
        for (int to = 0; to < device_count; ++to) {
            if (from == to) continue;
            int forward = 0, backward = 0;
            CHECK(cudaDeviceCanAccessPeer(&forward, from, to));
            CHECK(cudaDeviceCanAccessPeer(&backward, to, from));
            std::printf("> Peer access from GPU%d to GPU%d: %s\n", from, to, forward ? "Yes" : "No");
            if (forward && backward && first < 0) {
                first = from;
                second = to;
            }
        }

    const bool peer = first >= 0;
    if (peer) {
        std::printf("Using GPU%d and GPU%d: enabling peer access both ways.\n", first, second);
        CHECK(cudaSetDevice(first));
        CHECK(cudaDeviceEnablePeerAccess(second, 0));
        CHECK(cudaSetDevice(second));
        CHECK(cudaDeviceEnablePeerAccess(first, 0));
    } else {
        first = 0;
        second = 1;
        std::printf("No pair can peer: GPU0 and GPU1 exchange data staged through host memory.\n");
    }

    const std::size_t bytes = buffer_floats * sizeof(float);
    float *on_first = nullptr, *on_second = nullptr, *scratch_first = nullptr, *scratch_second = nullptr;
    CHECK(cudaSetDevice(first));
    CHECK(cudaMalloc(&on_first, bytes));
    if (!peer) CHECK(cudaMalloc(&scratch_first, bytes));
    CHECK(cudaSetDevice(second));
    CHECK(cudaMalloc(&on_second, bytes));
    if (!peer) CHECK(cudaMalloc(&scratch_second, bytes));
    float* host = nullptr;
    CHECK(cudaMallocHost(&host, bytes));

    // Timed on the first GPU: cudaMemcpyPeer is ordered with the work of both devices, so the stop
    // event completes only after the last copy.
    CHECK(cudaSetDevice(first));
    cudaEvent_t start = nullptr, stop = nullptr;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaEventRecord(start, 0));
    for (int copy = 0; copy < ping_pong_copies; ++copy) {
        if (copy % 2 == 0) CHECK(cudaMemcpyPeer(on_second, second, on_first, first, bytes));
        else CHECK(cudaMemcpyPeer(on_first, first, on_second, second, bytes));
    }
    CHECK(cudaEventRecord(stop, 0));
    CHECK(cudaEventSynchronize(stop));
    float milliseconds = 0.0f;
    CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
    const double gigabytes = double(bytes) * ping_pong_copies / 1e9;
    std::printf("cudaMemcpyPeer between GPU%d and GPU%d: %.2f GB/s (%s)\n", first, second,
                gigabytes / (milliseconds / 1e3), peer ? "peer to peer" : "staged through the host");

    // Small whole numbers stay exact through two doublings, so the check can demand equality.
    for (std::size_t i = 0; i < buffer_floats; ++i) host[i] = float(i % 4096);
    CHECK(cudaMemcpy(on_first, host, bytes, cudaMemcpyHostToDevice));

    run_times_two(second, on_second, on_first, first, scratch_second, peer);
    run_times_two(first, on_first, on_second, second, scratch_first, peer);

    CHECK(cudaMemcpy(host, on_first, bytes, cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < buffer_floats; ++i)
        if (host[i] != float(i % 4096) * 4.0f) {
            if (wrong == 0)
                std::printf("Mismatch at [%zu]: %.1f instead of %.1f\n", i, host[i], float(i % 4096) * 4.0f);
            ++wrong;
        }

    if (peer) {
        std::printf("Disabling peer access.\n");
        CHECK(cudaSetDevice(first));
        CHECK(cudaDeviceDisablePeerAccess(second));
        CHECK(cudaSetDevice(second));
        CHECK(cudaDeviceDisablePeerAccess(first));
    }

    CHECK(cudaSetDevice(first));
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(on_first));
    CHECK(cudaFree(scratch_first));
    CHECK(cudaSetDevice(second));
    CHECK(cudaFree(on_second));
    CHECK(cudaFree(scratch_second));
    CHECK(cudaFreeHost(host));

    if (wrong != 0) {
        std::printf("%zu of %zu values wrong\nTest failed\n", wrong, buffer_floats);
        return EXIT_FAILURE;
    }
    std::printf("Test passed\n");
    return EXIT_SUCCESS;
}
