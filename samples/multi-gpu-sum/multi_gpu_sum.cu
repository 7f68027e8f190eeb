// multi-gpu-sum: the data-parallel pattern of NVIDIA's simpleMultiGPU, written for these samples. The
// input is split across every GPU (the remainder on the first ones); one host thread queues, for each
// GPU in turn, the copy of its slice from pinned memory, a block-wise sum in shared memory and the
// copy of the partial sums back, all on that GPU's stream; only then does it wait for each GPU and
// add the partials. The result is compared with the sum on the host. Exit status: 0 passed, 1 failed.
#include <cmath>
#include <cstdio>
#include <vector>

#include "multi_gpu_sum.h"
#include "sample_helpers.h"

__global__ static void block_sums(float* partials, const float* input, std::size_t count)
{
    __shared__ float cache[kThreads];
    float sum = 0.0f;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += blockDim.x * gridDim.x)
        sum += input[i];
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = cache[0];
}

int main(int argc, char** argv)
{
    const std::size_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 22) + 7;
    int gpus = 0;
    checkSample(cudaGetDeviceCount(&gpus));
    if (gpus > kMaxGpus) gpus = kMaxGpus;
    std::printf("CUDA-capable device count: %d\n", gpus);

    float* input = nullptr;
    checkSample(cudaMallocHost(&input, total * sizeof(float)));
    for (std::size_t i = 0; i < total; ++i) input[i] = 1.0f + static_cast<float>(i % 1000) / 1000.0f;

    std::vector<GpuPlan> plans(gpus);
    std::size_t offset = 0;
    for (int g = 0; g < gpus; ++g) {
        GpuPlan& plan = plans[g];
        plan.count = total / gpus + (static_cast<std::size_t>(g) < total % gpus ? 1 : 0);
        plan.host_input = input + offset;
        offset += plan.count;
        checkSample(cudaSetDevice(g));
        checkSample(cudaStreamCreate(&plan.stream));
        checkSample(cudaMalloc(&plan.device_input, plan.count * sizeof(float) + 1));
        checkSample(cudaMalloc(&plan.device_partials, kBlocks * sizeof(float)));
        checkSample(cudaMallocHost(&plan.host_partials, kBlocks * sizeof(float)));
    }

    std::printf("Computing with %d GPUs...\n", gpus);
    cudaEvent_t start, stop;
    checkSample(cudaSetDevice(0));
    checkSample(cudaEventCreate(&start));
    checkSample(cudaEventCreate(&stop));
    checkSample(cudaEventRecord(start));
    for (int g = 0; g < gpus; ++g) {
        GpuPlan& plan = plans[g];
        checkSample(cudaSetDevice(g));
        checkSample(cudaMemcpyAsync(plan.device_input, plan.host_input, plan.count * sizeof(float),
                                    cudaMemcpyHostToDevice, plan.stream));
        block_sums<<<kBlocks, kThreads, 0, plan.stream>>>(plan.device_partials, plan.device_input, plan.count);
        checkLastSample("block_sums() execution failed.");
        checkSample(cudaMemcpyAsync(plan.host_partials, plan.device_partials, kBlocks * sizeof(float),
                                    cudaMemcpyDeviceToHost, plan.stream));
    }
    double gpu_sum = 0;
    for (int g = 0; g < gpus; ++g) {
        GpuPlan& plan = plans[g];
        checkSample(cudaSetDevice(g));
        checkSample(cudaStreamSynchronize(plan.stream));
        plan.sum = 0;
        for (int b = 0; b < kBlocks; ++b) plan.sum += plan.host_partials[b];
        gpu_sum += plan.sum;
    }
    checkSample(cudaSetDevice(0));
    checkSample(cudaEventRecord(stop));
    checkSample(cudaEventSynchronize(stop));
    float ms = 0;
    checkSample(cudaEventElapsedTime(&ms, start, stop));
    std::printf("  GPU Processing time: %f (ms)\n\n", ms);

    double host_sum = 0;
    for (std::size_t i = 0; i < total; ++i) host_sum += input[i];
    const double difference = std::fabs(gpu_sum - host_sum) / std::fabs(host_sum);
    std::printf("  GPU sum: %f\n  CPU sum: %f\n  Relative difference: %E \n\n", gpu_sum, host_sum, difference);

    for (int g = 0; g < gpus; ++g) {
        GpuPlan& plan = plans[g];
        checkSample(cudaSetDevice(g));
        checkSample(cudaFreeHost(plan.host_partials));
        checkSample(cudaFree(plan.device_partials));
        checkSample(cudaFree(plan.device_input));
        checkSample(cudaStreamDestroy(plan.stream));
    }
    checkSample(cudaSetDevice(0));
    checkSample(cudaEventDestroy(start));
    checkSample(cudaEventDestroy(stop));
    checkSample(cudaFreeHost(input));
    const bool passed = difference < 1e-5 && total > 0;
    std::printf("%s\n", passed ? "Test passed" : "Test failed!");
    return passed ? EXIT_SUCCESS : EXIT_FAILURE;
}
