// Every share gets n / parts elements; I assumed n divides evenly and never handed out the n % parts left over.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <thread>
#include <vector>

#define RETURN_IF_FAILED(call)                                     \
    do {                                                           \
        const cudaError_t failed_status_ = (call);                 \
        if (failed_status_ != cudaSuccess) return failed_status_;  \
    } while (0)

namespace {

class CurrentDeviceGuard {
public:
    CurrentDeviceGuard()
    {
        if (cudaGetDevice(&saved_) != cudaSuccess) {
            saved_ = -1;
            cudaGetLastError();
        }
    }
    ~CurrentDeviceGuard()
    {
        if (saved_ >= 0) cudaSetDevice(saved_);
    }
    CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
    CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

private:
    int saved_ = -1;
};

constexpr unsigned threads_per_block = 256;
constexpr unsigned max_blocks = 65536;

constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

// Everything one device needs for its share, so that one loop can release it all.
struct DeviceWork {
    int device = -1;
    Share share;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t started = nullptr;
    cudaEvent_t finished = nullptr;
};

cudaError_t prepare(DeviceWork& work, bool timed)
{
    RETURN_IF_FAILED(cudaSetDevice(work.device));
    RETURN_IF_FAILED(cudaStreamCreateWithFlags(&work.stream, cudaStreamNonBlocking));
    RETURN_IF_FAILED(cudaMalloc(&work.buffer, work.share.count * sizeof(float)));
    if (timed) {
        RETURN_IF_FAILED(cudaEventCreate(&work.started));
        RETURN_IF_FAILED(cudaEventCreate(&work.finished));
    }
    return cudaSuccess;
}

cudaError_t issue(DeviceWork& work, float* out, const float* in, float factor)
{
    const std::size_t bytes = work.share.count * sizeof(float);
    RETURN_IF_FAILED(cudaSetDevice(work.device));
    if (work.started != nullptr) RETURN_IF_FAILED(cudaEventRecord(work.started, work.stream));
    RETURN_IF_FAILED(cudaMemcpyAsync(work.buffer, in + work.share.first, bytes, cudaMemcpyHostToDevice, work.stream));
    scale_kernel<<<blocks_for(work.share.count), threads_per_block, 0, work.stream>>>(work.buffer, work.share.count,
                                                                                       factor);
    RETURN_IF_FAILED(cudaGetLastError());
    RETURN_IF_FAILED(cudaMemcpyAsync(out + work.share.first, work.buffer, bytes, cudaMemcpyDeviceToHost, work.stream));
    if (work.finished != nullptr) RETURN_IF_FAILED(cudaEventRecord(work.finished, work.stream));
    return cudaSuccess;
}

// Releases whatever was made, with its device current; returns the first error met.
cudaError_t release(DeviceWork& work)
{
    if (work.device < 0) return cudaSuccess;
    cudaError_t first = cudaSetDevice(work.device);
    auto keep = [&first](cudaError_t status) {
        if (first == cudaSuccess) first = status;
    };
    if (work.stream != nullptr) keep(cudaStreamSynchronize(work.stream));
    if (work.started != nullptr) keep(cudaEventDestroy(work.started));
    if (work.finished != nullptr) keep(cudaEventDestroy(work.finished));
    if (work.buffer != nullptr) keep(cudaFree(work.buffer));
    if (work.stream != nullptr) keep(cudaStreamDestroy(work.stream));
    work = DeviceWork{};
    return first;
}

cudaError_t run_share(int device, float* out, const float* in, float factor, Share share)
{
    cudaError_t status = cudaSetDevice(device);   // this thread started on device 0
    float* buffer = nullptr;
    const std::size_t bytes = share.count * sizeof(float);
    if (status == cudaSuccess) status = cudaMalloc(&buffer, bytes);
    if (status == cudaSuccess) status = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
    if (status == cudaSuccess) {
        scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
        status = cudaGetLastError();
    }
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
        const std::size_t count = n / p;
        plan.push_back({first, count});
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

    const std::size_t parts = weights.size();
    std::vector<std::size_t> counts(parts);
    std::vector<double> fractions(parts);
    std::size_t given = 0;
    for (std::size_t i = 0; i < parts; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        const double whole = std::floor(ideal);
        counts[i] = static_cast<std::size_t>(whole);
        fractions[i] = ideal - whole;
        given += counts[i];
    }
    std::vector<std::size_t> order(parts);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    for (std::size_t k = 0; given < n && k < parts; ++k) {
        if (weights[order[k]] == 0) continue;
        ++counts[order[k]];
        ++given;
    }

    std::vector<Share> plan(parts);
    std::size_t first = 0;
    for (std::size_t i = 0; i < parts; ++i) {
        plan[i] = {first, counts[i]};
        first += counts[i];
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* buffer = nullptr;
    if (cudaMallocHost(&buffer, n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return buffer;
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    int device_count = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    if (plan.size() > static_cast<std::size_t>(device_count)) return cudaErrorInvalidValue;

    CurrentDeviceGuard guard;
    std::vector<DeviceWork> work(plan.size());
    const bool timed = device_ms != nullptr;
    cudaError_t status = cudaSuccess;

    // 1. prepare
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        work[d].device = static_cast<int>(d);
        work[d].share = plan[d];
        status = prepare(work[d], timed);
    }
    // 2. issue: nothing here waits
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d)
        if (work[d].device >= 0) status = issue(work[d], out, in, factor);
    // 3. wait
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d)
        if (work[d].device >= 0) status = cudaStreamSynchronize(work[d].stream);
    if (status == cudaSuccess && timed) {
        for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
            if (work[d].device < 0) continue;
            status = cudaEventElapsedTime(&(*device_ms)[d], work[d].started, work[d].finished);
        }
    }

    for (DeviceWork& w : work) {
        const cudaError_t released = release(w);
        if (status == cudaSuccess) status = released;
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    int device_count = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    if (plan.size() > static_cast<std::size_t>(device_count)) return cudaErrorInvalidValue;

    std::vector<cudaError_t> statuses(plan.size(), cudaSuccess);   // one slot per thread
    std::vector<std::thread> workers;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        workers.emplace_back([&, d] { statuses[d] = run_share(static_cast<int>(d), out, in, factor, plan[d]); });
    }
    for (std::thread& worker : workers) worker.join();   // all started before the first join
    for (cudaError_t status : statuses)
        if (status != cudaSuccess) return status;
    return cudaSuccess;
}
