// Weighted split: after rounding down I give whatever is missing to the last share.
#include "split_work.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr unsigned kBlock = 256;

// One thread per element: the grid is as large as the share.
__global__ void scale_each(float* data, std::size_t n, float factor)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

unsigned grid_for(std::size_t n)
{
    return static_cast<unsigned>((n + kBlock - 1) / kBlock);
}

cudaError_t plan_fits(std::size_t shares)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess) return status;
    if (shares > static_cast<std::size_t>(devices)) return cudaErrorInvalidValue;
    return cudaSuccess;
}

// One device's whole share on the calling thread, as in section 2.7.
cudaError_t run_share(int device, float* out, const float* in, float factor, Share share)
{
    cudaError_t status = cudaSetDevice(device);   // a new thread starts with device 0 current
    float* buffer = nullptr;
    const std::size_t bytes = share.count * sizeof(float);
    if (status == cudaSuccess) status = cudaMalloc(&buffer, bytes);
    if (status == cudaSuccess) status = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
    if (status == cudaSuccess) {
        scale_each<<<grid_for(share.count), kBlock>>>(buffer, share.count, factor);
        status = cudaGetLastError();
    }
    if (status == cudaSuccess) status = cudaDeviceSynchronize();
    if (status == cudaSuccess) status = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
    if (buffer != nullptr) {
        const cudaError_t freed = cudaFree(buffer);
        if (status == cudaSuccess) status = freed;
    }
    return status;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    std::size_t first = 0;
    for (std::size_t i = 0; i < p; ++i) {
        // ceil((n - i) / p) is n / p, plus one for the first n % p shares.
        const std::size_t count = (n + p - 1 - i) / p;
        plan.push_back(Share{first, count});
        first += count;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    double total = 0;
    for (double w : weights) {
        if (!(w >= 0)) return {};
        total += w;
    }
    if (!(total > 0)) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<double> left(k);
    std::size_t sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        counts[i] = static_cast<std::size_t>(ideal);
        if (counts[i] > n) counts[i] = n;
        left[i] = weights[i] > 0 ? ideal - static_cast<double>(counts[i]) : -1.0;
        sum += counts[i];
    }
    // Whatever rounding down left over goes to the last share.
    counts[k - 1] += n - sum;

    std::vector<Share> plan;
    std::size_t first = 0;
    for (std::size_t c : counts) {
        plan.push_back(Share{first, c});
        first += c;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* memory = nullptr;
    if (cudaHostAlloc(&memory, n * sizeof(float), cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return static_cast<float*>(memory);
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) {
        device_ms->clear();
        device_ms->resize(plan.size(), 0.0f);
    }
    cudaError_t status = plan_fits(plan.size());
    if (status != cudaSuccess) return status;

    int caller = 0;
    status = cudaGetDevice(&caller);
    if (status != cudaSuccess) return status;

    const std::size_t parts = plan.size();
    std::vector<cudaStream_t> stream(parts, nullptr);
    std::vector<float*> buffer(parts, nullptr);
    std::vector<cudaEvent_t> start(parts, nullptr), stop(parts, nullptr);

    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        status = cudaSetDevice(static_cast<int>(d));
        if (status == cudaSuccess) status = cudaStreamCreate(&stream[d]);
        if (status == cudaSuccess) status = cudaMalloc(&buffer[d], plan[d].count * sizeof(float));
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventCreate(&start[d]);
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventCreate(&stop[d]);
    }

    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        status = cudaSetDevice(static_cast<int>(d));
        if (status == cudaSuccess && start[d] != nullptr) status = cudaEventRecord(start[d], stream[d]);
        if (status == cudaSuccess)
            status = cudaMemcpyAsync(buffer[d], in + plan[d].first, bytes, cudaMemcpyHostToDevice, stream[d]);
        if (status == cudaSuccess) {
            scale_each<<<grid_for(plan[d].count), kBlock, 0, stream[d]>>>(buffer[d], plan[d].count, factor);
            status = cudaGetLastError();
        }
        if (status == cudaSuccess)
            status = cudaMemcpyAsync(out + plan[d].first, buffer[d], bytes, cudaMemcpyDeviceToHost, stream[d]);
        if (status == cudaSuccess && stop[d] != nullptr) status = cudaEventRecord(stop[d], stream[d]);
    }

    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (stream[d] == nullptr) continue;
        status = cudaStreamSynchronize(stream[d]);
        if (status == cudaSuccess && device_ms != nullptr)
            status = cudaEventElapsedTime(&(*device_ms)[d], start[d], stop[d]);
    }

    for (std::size_t d = 0; d < parts; ++d) {
        if (stream[d] == nullptr && buffer[d] == nullptr) continue;
        cudaSetDevice(static_cast<int>(d));
        if (stream[d] != nullptr) cudaStreamSynchronize(stream[d]);
        if (start[d] != nullptr) cudaEventDestroy(start[d]);
        if (stop[d] != nullptr) cudaEventDestroy(stop[d]);
        if (buffer[d] != nullptr) cudaFree(buffer[d]);
        if (stream[d] != nullptr) cudaStreamDestroy(stream[d]);
    }
    const cudaError_t restored = cudaSetDevice(caller);
    return status != cudaSuccess ? status : restored;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    const cudaError_t fits = plan_fits(plan.size());
    if (fits != cudaSuccess) return fits;

    std::vector<cudaError_t> statuses(plan.size(), cudaSuccess);
    std::vector<std::thread> workers;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        workers.emplace_back(
            [&, d] { statuses[d] = run_share(static_cast<int>(d), out, in, factor, plan[d]); });
    }
    for (std::thread& worker : workers) worker.join();
    for (cudaError_t status : statuses)
        if (status != cudaSuccess) return status;
    return cudaSuccess;
}
