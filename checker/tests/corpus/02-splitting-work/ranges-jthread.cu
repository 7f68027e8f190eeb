// Style: C++20 ranges over the non-empty shares, one lambda per pass; std::jthread workers with a
// std::atomic first-error slot; weighted shares from the ceilings of the running ideal sums.
#include "split_work.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <ranges>
#include <thread>
#include <vector>

namespace {

class KeepCurrentDevice {
public:
    KeepCurrentDevice()
    {
        if (cudaGetDevice(&device_) != cudaSuccess) {
            device_ = -1;
            cudaGetLastError();
        }
    }
    ~KeepCurrentDevice()
    {
        if (device_ >= 0) cudaSetDevice(device_);
    }
    KeepCurrentDevice(const KeepCurrentDevice&) = delete;
    KeepCurrentDevice& operator=(const KeepCurrentDevice&) = delete;

private:
    int device_ = -1;
};

constexpr unsigned kThreads = 256;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned grid_for(std::size_t n)
{
    return static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65536));
}

cudaError_t fits_on_machine(std::size_t shares)
{
    int count = 0;
    if (const auto s = cudaGetDeviceCount(&count); s != cudaSuccess) return s;
    return shares <= static_cast<std::size_t>(count) ? cudaSuccess : cudaErrorInvalidValue;
}

// The indices of the shares that have work, as a view.
auto busy_devices(const std::vector<Share>& plan)
{
    return std::views::iota(std::size_t{0}, plan.size()) |
           std::views::filter([&plan](std::size_t d) { return plan[d].count > 0; });
}

struct Device {
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    bool touched = false;
};

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return {};
    const auto p = static_cast<std::size_t>(parts);
    std::vector<Share> plan;
    plan.reserve(p);
    for (std::size_t i : std::views::iota(std::size_t{0}, p)) {
        const std::size_t first = plan.empty() ? 0 : plan.back().first + plan.back().count;
        plan.push_back(Share{first, n / p + (i < n % p ? 1u : 0u)});
    }
    return plan;
}

// Boundary i is ceil(n * W_i / W), W_i the sum of the weights before share i: each count is within one of
// its ideal, the last boundary is n, and a weight of 0 leaves the boundary where it was.
std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty() || std::ranges::any_of(weights, [](double w) { return !(w >= 0); })) return {};
    double total = 0;
    for (double w : weights) total += w;
    if (!(total > 0)) return {};

    std::vector<Share> plan;
    double prefix = 0;
    std::size_t at = 0;
    for (double w : weights) {
        prefix += w;
        std::size_t next = at;
        if (w > 0) {
            if (prefix >= total) {
                next = n;
            } else {
                const double b = std::ceil(static_cast<double>(n) * (prefix / total));
                next = std::clamp(static_cast<std::size_t>(b), at, n);
            }
        }
        plan.push_back(Share{at, next - at});
        at = next;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    float* p = nullptr;
    if (n > 0 && cudaMallocHost(&p, n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        p = nullptr;
    }
    return p;
}

void free_host_buffer(float* buffer)
{
    if (buffer) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms) device_ms->assign(plan.size(), 0.0f);
    if (const auto s = fits_on_machine(plan.size()); s != cudaSuccess) return s;

    KeepCurrentDevice keep;
    std::vector<Device> devs(plan.size());
    cudaError_t status = cudaSuccess;
    auto step = [&status](cudaError_t s) {
        if (status == cudaSuccess) status = s;
        return status == cudaSuccess;
    };

    auto prepare = [&](std::size_t d) {
        Device& dev = devs[d];
        if (!step(cudaSetDevice(static_cast<int>(d)))) return;
        dev.touched = true;
        if (!step(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking))) return;
        if (!step(cudaMalloc(&dev.buffer, plan[d].count * sizeof(float)))) return;
        if (device_ms && step(cudaEventCreate(&dev.start))) step(cudaEventCreate(&dev.stop));
    };
    auto issue = [&](std::size_t d) {
        Device& dev = devs[d];
        const std::size_t bytes = plan[d].count * sizeof(float);
        if (!step(cudaSetDevice(static_cast<int>(d)))) return;
        if (dev.start && !step(cudaEventRecord(dev.start, dev.stream))) return;
        if (!step(cudaMemcpyAsync(dev.buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice, dev.stream))) return;
        scale_kernel<<<grid_for(plan[d].count), kThreads, 0, dev.stream>>>(dev.buffer, plan[d].count, factor);
        if (!step(cudaGetLastError())) return;
        if (!step(cudaMemcpyAsync(out + plan[d].first, dev.buffer, bytes, cudaMemcpyDeviceToHost, dev.stream))) return;
        if (dev.stop) step(cudaEventRecord(dev.stop, dev.stream));
    };
    auto wait = [&](std::size_t d) {
        if (!step(cudaStreamSynchronize(devs[d].stream))) return;
        if (device_ms) step(cudaEventElapsedTime(&(*device_ms)[d], devs[d].start, devs[d].stop));
    };

    for (std::size_t d : busy_devices(plan))
        if (status == cudaSuccess) prepare(d);
    for (std::size_t d : busy_devices(plan))
        if (status == cudaSuccess) issue(d);
    for (std::size_t d : busy_devices(plan))
        if (status == cudaSuccess) wait(d);

    for (std::size_t d : busy_devices(plan)) {
        Device& dev = devs[d];
        if (!dev.touched) continue;
        cudaSetDevice(static_cast<int>(d));
        if (dev.stream) cudaStreamSynchronize(dev.stream);
        if (dev.start) cudaEventDestroy(dev.start);
        if (dev.stop) cudaEventDestroy(dev.stop);
        if (dev.buffer) cudaFree(dev.buffer);
        if (dev.stream) cudaStreamDestroy(dev.stream);
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const auto s = fits_on_machine(plan.size()); s != cudaSuccess) return s;

    std::atomic<cudaError_t> first_error{cudaSuccess};
    auto record = [&first_error](cudaError_t s) {
        cudaError_t expected = cudaSuccess;
        if (s != cudaSuccess) first_error.compare_exchange_strong(expected, s);
    };
    {
        std::vector<std::jthread> workers;
        for (std::size_t d : busy_devices(plan)) {
            workers.emplace_back([&, d] {
                const Share share = plan[d];
                const std::size_t bytes = share.count * sizeof(float);
                cudaError_t s = cudaSetDevice(static_cast<int>(d));
                float* buffer = nullptr;
                if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
                if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
                if (s == cudaSuccess) {
                    scale_kernel<<<grid_for(share.count), kThreads>>>(buffer, share.count, factor);
                    s = cudaGetLastError();
                }
                if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
                if (buffer) {
                    const cudaError_t f = cudaFree(buffer);
                    if (s == cudaSuccess) s = f;
                }
                record(s);
            });
        }
    }   // the jthreads join here
    return first_error.load();
}
