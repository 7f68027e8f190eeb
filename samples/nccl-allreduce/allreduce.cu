// Data-parallel gradient averaging on every GPU of the machine: one host thread, a communicator
// per device from ncclCommInitAll, a "gradient" kernel per device, one grouped all-reduce with
// ncclAvg on each device's stream, and independent work on a second stream that overlaps it.
// Checks the result against the host's own average and prints the all-reduce's time and bus
// bandwidth from CUDA events. Builds unchanged with nvcc against the real NCCL.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                                                              \
    do {                                                                                              \
        cudaError_t status_ = (call);                                                                 \
        if (status_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "%s:%d: CUDA error %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)
#define CHECK_NCCL(call)                                                                              \
    do {                                                                                              \
        ncclResult_t status_ = (call);                                                                \
        if (status_ != ncclSuccess) {                                                                 \
            std::fprintf(stderr, "%s:%d: NCCL error %s\n", __FILE__, __LINE__, ncclGetErrorString(status_)); \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

// Rank r's gradient: small integers times 1/8, exact in float, so the average is exact too.
__global__ void make_gradient(float* g, int rank, size_t n) {
    size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) g[i] = static_cast<float>((rank + 1) * (i % 5 + 1)) * 0.125f;
}

__global__ void busy_work(float* x, size_t n) {
    size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

int main() {
    int n = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n));
    const size_t count = 1 << 22;   // 16 MiB of floats per device
    std::vector<ncclComm_t> comms(n);
    CHECK_NCCL(ncclCommInitAll(comms.data(), n, nullptr));
    std::vector<float*> gradients(n), scratch(n);
    std::vector<cudaStream_t> streams(n), side(n);
    std::vector<cudaEvent_t> start(n), stop(n);
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaMalloc(&gradients[r], count * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&scratch[r], count * sizeof(float)));
        CHECK_CUDA(cudaStreamCreate(&streams[r]));
        CHECK_CUDA(cudaStreamCreate(&side[r]));
        CHECK_CUDA(cudaEventCreate(&start[r]));
        CHECK_CUDA(cudaEventCreate(&stop[r]));
        make_gradient<<<(count + 255) / 256, 256, 0, streams[r]>>>(gradients[r], r, count);
    }
    // Every device ready before the clock starts, so that the time is the all-reduce's own.
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamSynchronize(streams[r]));
    }
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaEventRecord(start[r], streams[r]));
    }
    CHECK_NCCL(ncclGroupStart());
    for (int r = 0; r < n; ++r)
        CHECK_NCCL(ncclAllReduce(gradients[r], gradients[r], count, ncclFloat32, ncclAvg, comms[r], streams[r]));
    CHECK_NCCL(ncclGroupEnd());
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaEventRecord(stop[r], streams[r]));
        busy_work<<<(count + 255) / 256, 256, 0, side[r]>>>(scratch[r], count);
    }
    long long wrong = 0;
    std::vector<float> result(count);
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamSynchronize(streams[r]));
        CHECK_CUDA(cudaMemcpy(result.data(), gradients[r], count * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count; ++i) {
            float sum = 0;
            for (int k = 0; k < n; ++k) sum += static_cast<float>((k + 1) * (i % 5 + 1)) * 0.125f;
            wrong += result[i] != sum / static_cast<float>(n);
        }
    }
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start[0], stop[0]));
    const double bytes = static_cast<double>(count) * sizeof(float);
    const double algbw = bytes / (ms * 1e-3) / 1e9;
    std::printf("all-reduce (ncclAvg) of %zu floats on %d GPU(s): %.1f us, algbw %.1f GB/s, busbw %.1f GB/s, %lld wrong\n",
                count, n, ms * 1e3, algbw, n > 1 ? algbw * 2.0 * (n - 1) / n : algbw, wrong);
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_NCCL(ncclCommDestroy(comms[r]));
        cudaFree(gradients[r]);
        cudaFree(scratch[r]);
        cudaStreamDestroy(streams[r]);
        cudaStreamDestroy(side[r]);
    }
    return wrong == 0 ? 0 : 1;
}
