// Style: scale_on_devices asks cudaPointerGetAttributes whether the caller's buffers are page-locked and copies
// straight from and to them when they are, staging through cudaMallocHost buffers only for pageable memory;
// std::async workers with cudaMemcpyAsync(cudaMemcpyDefault) on the legacy default stream.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <future>
#include <numeric>
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

unsigned blocks_for(std::size_t n)
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

// True for memory the copy engines can use directly; asking leaves no error behind.
bool page_locked(const void* p)
{
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return attributes.type == cudaMemoryTypeHost;
}

struct Staged {
    bool used = false;
    float* staging = nullptr;   // page-locked copy of the share, only for pageable caller memory
    const float* src = nullptr;
    float* dst = nullptr;
    float* device = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t begin = nullptr;
    cudaEvent_t end = nullptr;
};

cudaError_t fits(std::size_t shares)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess) return status;
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
    double total = 0;
    for (double w : weights) {
        if (!(w >= 0)) return {};
        total += w;
    }
    if (!(total > 0)) return {};

    std::vector<std::size_t> counts(weights.size());
    std::vector<double> fractions(weights.size());
    std::size_t given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        const double whole = std::floor(ideal);
        counts[i] = std::min(n, static_cast<std::size_t>(whole));
        fractions[i] = weights[i] > 0 ? ideal - whole : -1;
        given += counts[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    for (std::size_t j = 0; j < order.size() && given < n; ++j) {
        if (fractions[order[j]] < 0) break;
        ++counts[order[j]];
        ++given;
    }

    std::vector<Share> plan;
    std::size_t first = 0;
    for (std::size_t c : counts) {
        plan.push_back({first, c});
        first += c;
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
    if (const cudaError_t checked = fits(plan.size()); checked != cudaSuccess) return checked;

    CurrentDeviceGuard guard;
    const bool direct = page_locked(in) && page_locked(out);
    std::vector<Staged> staged(plan.size());
    cudaError_t status = cudaSuccess;
    auto keep = [&status](cudaError_t s) {
        if (status == cudaSuccess) status = s;
    };

    // Prepare: everything each device needs; for pageable memory the share goes into a page-locked buffer.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        Staged& s = staged[d];
        const std::size_t bytes = plan[d].count * sizeof(float);
        keep(cudaSetDevice(static_cast<int>(d)));
        if (status != cudaSuccess) break;
        s.used = true;
        keep(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
        if (status == cudaSuccess) keep(cudaMalloc(&s.device, bytes));
        if (status == cudaSuccess && device_ms != nullptr) keep(cudaEventCreate(&s.begin));
        if (status == cudaSuccess && device_ms != nullptr) keep(cudaEventCreate(&s.end));
        if (status != cudaSuccess) break;
        if (direct) {
            s.src = in + plan[d].first;
            s.dst = out + plan[d].first;
        } else {
            keep(cudaMallocHost(&s.staging, bytes));
            if (status != cudaSuccess) break;
            std::memcpy(s.staging, in + plan[d].first, bytes);
            s.src = s.staging;
            s.dst = s.staging;
        }
    }

    // Issue: nothing here waits, since every copy is from or to page-locked memory.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Staged& s = staged[d];
        if (!s.used) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        keep(cudaSetDevice(static_cast<int>(d)));
        if (status == cudaSuccess && s.begin) keep(cudaEventRecord(s.begin, s.stream));
        if (status == cudaSuccess) keep(cudaMemcpyAsync(s.device, s.src, bytes, cudaMemcpyHostToDevice, s.stream));
        if (status == cudaSuccess) {
            scale_kernel<<<blocks_for(plan[d].count), threads_per_block, 0, s.stream>>>(s.device, plan[d].count, factor);
            keep(cudaGetLastError());
        }
        if (status == cudaSuccess) keep(cudaMemcpyAsync(s.dst, s.device, bytes, cudaMemcpyDeviceToHost, s.stream));
        if (status == cudaSuccess && s.end) keep(cudaEventRecord(s.end, s.stream));
    }

    // Wait; a staged share still has to go from its staging buffer to its place in `out`.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Staged& s = staged[d];
        if (!s.used) continue;
        keep(cudaStreamSynchronize(s.stream));
        if (status != cudaSuccess) break;
        if (s.staging != nullptr) std::memcpy(out + plan[d].first, s.staging, plan[d].count * sizeof(float));
        if (device_ms != nullptr) keep(cudaEventElapsedTime(&(*device_ms)[d], s.begin, s.end));
    }

    for (std::size_t d = 0; d < staged.size(); ++d) {
        Staged& s = staged[d];
        if (!s.used) continue;
        keep(cudaSetDevice(static_cast<int>(d)));
        if (s.stream) keep(cudaStreamSynchronize(s.stream));
        if (s.begin) cudaEventDestroy(s.begin);
        if (s.end) cudaEventDestroy(s.end);
        if (s.device) cudaFree(s.device);
        if (s.staging) cudaFreeHost(s.staging);
        if (s.stream) cudaStreamDestroy(s.stream);
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const cudaError_t checked = fits(plan.size()); checked != cudaSuccess) return checked;

    std::vector<std::future<cudaError_t>> pending;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        pending.push_back(std::async(std::launch::async, [=, share = plan[d]]() {
            cudaError_t status = cudaSetDevice(static_cast<int>(d));
            float* buffer = nullptr;
            const std::size_t bytes = share.count * sizeof(float);
            if (status == cudaSuccess) status = cudaMalloc(&buffer, bytes);
            if (status == cudaSuccess) status = cudaMemcpyAsync(buffer, in + share.first, bytes, cudaMemcpyDefault, 0);
            if (status == cudaSuccess) {
                scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
                status = cudaGetLastError();
            }
            if (status == cudaSuccess) status = cudaMemcpyAsync(out + share.first, buffer, bytes, cudaMemcpyDefault, 0);
            if (status == cudaSuccess) status = cudaStreamSynchronize(0);
            if (buffer != nullptr) {
                const cudaError_t freed = cudaFree(buffer);
                if (status == cudaSuccess) status = freed;
            }
            return status;
        }));
    }
    cudaError_t first = cudaSuccess;
    for (auto& p : pending) {
        const cudaError_t status = p.get();
        if (first == cudaSuccess) first = status;
    }
    return first;
}
