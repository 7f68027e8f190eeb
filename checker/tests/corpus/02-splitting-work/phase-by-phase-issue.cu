// Style: scale_on_devices queues phase by phase across devices (all copies in, then all kernels, then all copies out), status accumulation, std::async workers.
#include "split_work.h"

#include <cmath>
#include <cstddef>
#include <future>
#include <queue>
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

// Keeps the first failure; later ones are usually its consequences.
inline void keep_first(cudaError_t& status, cudaError_t next)
{
    if (status == cudaSuccess) status = next;
}

cudaError_t check_plan(const std::vector<Share>& plan)
{
    int devices = 0;
    const cudaError_t counted = cudaGetDeviceCount(&devices);
    if (counted != cudaSuccess) return counted;
    return plan.size() > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return {};
    const std::size_t p = static_cast<std::size_t>(parts);
    const std::size_t base = n / p, extra = n % p;
    std::vector<Share> plan(p);
    for (std::size_t i = 0; i < p; ++i) {
        plan[i].first = i * base + (i < extra ? i : extra);   // the i shares before it, extra ones included
        plan[i].count = base + (i < extra ? 1 : 0);
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    double sum = 0.0;
    for (double w : weights) {
        if (w < 0.0 || std::isnan(w)) return {};
        sum += w;
    }
    if (weights.empty() || sum <= 0.0) return {};

    std::vector<std::size_t> counts(weights.size(), 0);
    // Largest fractional part on top; on a tie the lower index wins.
    auto smaller = [](const std::pair<double, std::size_t>& a, const std::pair<double, std::size_t>& b) {
        return a.first < b.first || (a.first == b.first && a.second > b.second);
    };
    std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>,
                        decltype(smaller)>
        by_fraction(smaller);
    std::size_t assigned = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double ideal = static_cast<double>(n) * (weights[i] / sum);
        const double down = std::floor(ideal);
        counts[i] = static_cast<std::size_t>(down);
        assigned += counts[i];
        if (weights[i] > 0.0) by_fraction.push({ideal - down, i});
    }
    while (assigned < n && !by_fraction.empty()) {
        ++counts[by_fraction.top().second];
        by_fraction.pop();
        ++assigned;
    }

    std::vector<Share> plan;
    plan.reserve(weights.size());
    std::size_t next = 0;
    for (std::size_t c : counts) {
        plan.push_back(Share{next, c});
        next += c;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    void* memory = nullptr;
    if (n == 0) return nullptr;
    if (cudaHostAlloc(&memory, n * sizeof(float), cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();   // leave no error behind
        return nullptr;
    }
    return static_cast<float*>(memory);
}

void free_host_buffer(float* buffer)
{
    if (buffer) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms) device_ms->assign(plan.size(), 0.0f);
    cudaError_t status = check_plan(plan);
    if (status != cudaSuccess) return status;

    CurrentDeviceGuard guard;
    const std::size_t parts = plan.size();
    std::vector<cudaStream_t> streams(parts, nullptr);
    std::vector<float*> buffers(parts, nullptr);
    std::vector<cudaEvent_t> starts(parts, nullptr), ends(parts, nullptr);
    auto active = [&](std::size_t d) { return plan[d].count > 0; };

    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (!active(d)) continue;
        keep_first(status, cudaSetDevice(static_cast<int>(d)));
        if (status == cudaSuccess) keep_first(status, cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
        if (status == cudaSuccess) keep_first(status, cudaMalloc(&buffers[d], plan[d].count * sizeof(float)));
        if (status == cudaSuccess && device_ms) {
            keep_first(status, cudaEventCreateWithFlags(&starts[d], cudaEventDefault));
            if (status == cudaSuccess) keep_first(status, cudaEventCreateWithFlags(&ends[d], cudaEventDefault));
        }
    }

    // Phase 1 on every device: the copies in (with the start events before them).
    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (!active(d)) continue;
        keep_first(status, cudaSetDevice(static_cast<int>(d)));
        if (status == cudaSuccess && starts[d]) keep_first(status, cudaEventRecord(starts[d], streams[d]));
        if (status == cudaSuccess)
            keep_first(status, cudaMemcpyAsync(buffers[d], in + plan[d].first, plan[d].count * sizeof(float),
                                               cudaMemcpyHostToDevice, streams[d]));
    }
    // Phase 2: the kernels.
    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (!active(d)) continue;
        keep_first(status, cudaSetDevice(static_cast<int>(d)));
        if (status != cudaSuccess) break;
        scale_kernel<<<blocks_for(plan[d].count), threads_per_block, 0, streams[d]>>>(buffers[d], plan[d].count,
                                                                                       factor);
        keep_first(status, cudaGetLastError());
    }
    // Phase 3: the copies out (with the end events after them).
    for (std::size_t d = 0; d < parts && status == cudaSuccess; ++d) {
        if (!active(d)) continue;
        keep_first(status, cudaSetDevice(static_cast<int>(d)));
        if (status == cudaSuccess)
            keep_first(status, cudaMemcpyAsync(out + plan[d].first, buffers[d], plan[d].count * sizeof(float),
                                               cudaMemcpyDeviceToHost, streams[d]));
        if (status == cudaSuccess && ends[d]) keep_first(status, cudaEventRecord(ends[d], streams[d]));
    }

    // Wait for every device, read the times, release: on every path.
    for (std::size_t d = 0; d < parts; ++d) {
        if (!active(d)) continue;
        if (streams[d] == nullptr && buffers[d] == nullptr && starts[d] == nullptr) continue;
        keep_first(status, cudaSetDevice(static_cast<int>(d)));
        if (streams[d]) keep_first(status, cudaStreamSynchronize(streams[d]));
        if (status == cudaSuccess && device_ms && starts[d] && ends[d])
            keep_first(status, cudaEventElapsedTime(&(*device_ms)[d], starts[d], ends[d]));
        if (starts[d]) keep_first(status, cudaEventDestroy(starts[d]));
        if (ends[d]) keep_first(status, cudaEventDestroy(ends[d]));
        if (buffers[d]) keep_first(status, cudaFree(buffers[d]));
        if (streams[d]) keep_first(status, cudaStreamDestroy(streams[d]));
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    const cudaError_t checked = check_plan(plan);
    if (checked != cudaSuccess) return checked;

    std::vector<std::future<cudaError_t>> results;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        const Share share = plan[d];
        const int device = static_cast<int>(d);
        results.push_back(std::async(std::launch::async, [=]() -> cudaError_t {
            cudaError_t status = cudaSetDevice(device);   // a new thread starts on device 0
            float* buffer = nullptr;
            const std::size_t bytes = share.count * sizeof(float);
            if (status == cudaSuccess) status = cudaMalloc(&buffer, bytes);
            if (status == cudaSuccess) status = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
            if (status == cudaSuccess) {
                scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
                status = cudaGetLastError();
            }
            if (status == cudaSuccess) status = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
            if (buffer) keep_first(status, cudaFree(buffer));
            return status;
        }));
    }
    cudaError_t first = cudaSuccess;
    for (auto& result : results) keep_first(first, result.get());   // every future is waited for
    return first;
}
