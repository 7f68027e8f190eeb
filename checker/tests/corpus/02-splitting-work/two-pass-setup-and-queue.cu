// Style: two passes instead of three (each device is set up and given its whole round trip in one visit,
// then every stream is waited for); a small class per device; std::thread workers that return through
// std::promise.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <future>
#include <memory>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

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

// One device's part of a call: made, queued, waited for and released by the same object.
class DeviceRun {
public:
    DeviceRun(int device, Share share) : device_(device), share_(share) {}

    // Makes the stream, buffer and events, then queues copy in, kernel and copy out. Never waits.
    cudaError_t start(float* out, const float* in, float factor, bool timed)
    {
        const std::size_t bytes = share_.count * sizeof(float);
        cudaError_t s = cudaSetDevice(device_);
        if (s == cudaSuccess) s = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
        if (s == cudaSuccess) s = cudaMalloc(&buffer_, bytes);
        if (s == cudaSuccess && timed) s = cudaEventCreate(&begin_);
        if (s == cudaSuccess && timed) s = cudaEventCreate(&end_);
        if (s == cudaSuccess && timed) s = cudaEventRecord(begin_, stream_);
        if (s == cudaSuccess) s = cudaMemcpyAsync(buffer_, in + share_.first, bytes, cudaMemcpyHostToDevice, stream_);
        if (s == cudaSuccess) {
            scale_kernel<<<blocks_for(share_.count), threads_per_block, 0, stream_>>>(buffer_, share_.count, factor);
            s = cudaGetLastError();
        }
        if (s == cudaSuccess) s = cudaMemcpyAsync(out + share_.first, buffer_, bytes, cudaMemcpyDeviceToHost, stream_);
        if (s == cudaSuccess && timed) s = cudaEventRecord(end_, stream_);
        return s;
    }

    cudaError_t finish(float* ms)
    {
        cudaError_t s = cudaStreamSynchronize(stream_);
        if (s == cudaSuccess && ms != nullptr) s = cudaEventElapsedTime(ms, begin_, end_);
        return s;
    }

    ~DeviceRun()
    {
        if (stream_ == nullptr && buffer_ == nullptr) return;
        cudaSetDevice(device_);
        if (stream_ != nullptr) cudaStreamSynchronize(stream_);
        if (begin_ != nullptr) cudaEventDestroy(begin_);
        if (end_ != nullptr) cudaEventDestroy(end_);
        if (buffer_ != nullptr) cudaFree(buffer_);
        if (stream_ != nullptr) cudaStreamDestroy(stream_);
    }

    DeviceRun(const DeviceRun&) = delete;
    DeviceRun& operator=(const DeviceRun&) = delete;

private:
    int device_;
    Share share_;
    cudaStream_t stream_ = nullptr;
    float* buffer_ = nullptr;
    cudaEvent_t begin_ = nullptr;
    cudaEvent_t end_ = nullptr;
};

cudaError_t check_plan(std::size_t shares)
{
    int devices = 0;
    const cudaError_t s = cudaGetDeviceCount(&devices);
    if (s != cudaSuccess) return s;
    return shares > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    std::size_t first = 0;
    for (std::size_t i = 0; i < p; ++i) {
        const std::size_t count = n / p + (i < n % p ? 1 : 0);
        plan.push_back({first, count});
        first += count;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    for (double w : weights)
        if (!(w >= 0)) return {};
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(total > 0)) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<double> fractions(k);
    std::size_t assigned = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        counts[i] = std::min(n, static_cast<std::size_t>(std::floor(ideal)));
        fractions[i] = ideal - std::floor(ideal);
        assigned += counts[i];
    }
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < k; ++i)
        if (weights[i] > 0) candidates.push_back(i);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    for (std::size_t i : candidates) {
        if (assigned >= n) break;
        ++counts[i];
        ++assigned;
    }

    std::vector<Share> plan(k);
    std::size_t first = 0;
    for (std::size_t i = 0; i < k; ++i) {
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
    if (const cudaError_t s = check_plan(plan.size()); s != cudaSuccess) return s;

    CurrentDeviceGuard guard;
    std::vector<std::unique_ptr<DeviceRun>> runs(plan.size());
    cudaError_t status = cudaSuccess;

    // Pass 1: each device in turn is set up and given its round trip; nothing waits.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        runs[d] = std::make_unique<DeviceRun>(static_cast<int>(d), plan[d]);
        status = runs[d]->start(out, in, factor, device_ms != nullptr);
    }
    // Pass 2: wait for every device.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (!runs[d]) continue;
        status = runs[d]->finish(device_ms != nullptr ? &(*device_ms)[d] : nullptr);
    }
    runs.clear();   // every device's things released, with that device current
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const cudaError_t s = check_plan(plan.size()); s != cudaSuccess) return s;

    std::vector<std::future<cudaError_t>> results;
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        std::promise<cudaError_t> promise;
        results.push_back(promise.get_future());
        threads.emplace_back(
            [device = static_cast<int>(d), share = plan[d], out, in, factor](std::promise<cudaError_t> p) {
                const std::size_t bytes = share.count * sizeof(float);
                cudaError_t s = cudaSetDevice(device);
                float* buffer = nullptr;
                if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
                if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
                if (s == cudaSuccess) {
                    scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
                    s = cudaGetLastError();
                }
                if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
                if (buffer != nullptr) {
                    const cudaError_t f = cudaFree(buffer);
                    if (s == cudaSuccess) s = f;
                }
                p.set_value(s);
            },
            std::move(promise));
    }
    for (std::thread& t : threads) t.join();
    cudaError_t first = cudaSuccess;
    for (auto& r : results) {
        const cudaError_t s = r.get();
        if (first == cudaSuccess) first = s;
    }
    return first;
}
