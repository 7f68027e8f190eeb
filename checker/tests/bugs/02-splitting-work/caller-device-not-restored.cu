// scale_on_devices switches devices many times and I never put the caller's device back at the end.
#include "split_work.h"

#include <cmath>
#include <cstddef>
#include <thread>
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

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 65536;

unsigned grid_for(std::size_t n)
{
    const std::size_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks == 0) return 1;
    return blocks < kMaxBlocks ? static_cast<unsigned>(blocks) : kMaxBlocks;
}

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

struct Device {
    int id = -1;
    cudaStream_t stream = nullptr;
    float* data = nullptr;
    cudaEvent_t t0 = nullptr, t1 = nullptr;
};

cudaError_t release_all(std::vector<Device>& devices)
{
    cudaError_t first = cudaSuccess;
    for (Device& dev : devices) {
        if (dev.id < 0) continue;
        cudaError_t s = cudaSetDevice(dev.id);
        if (s == cudaSuccess && dev.stream) s = cudaStreamSynchronize(dev.stream);
        if (first == cudaSuccess) first = s;
        if (dev.t0) cudaEventDestroy(dev.t0);
        if (dev.t1) cudaEventDestroy(dev.t1);
        if (dev.data) cudaFree(dev.data);
        if (dev.stream) cudaStreamDestroy(dev.stream);
        dev = Device{};
    }
    return first;
}

bool too_many_shares(std::size_t shares, cudaError_t* error)
{
    int count = 0;
    *error = cudaGetDeviceCount(&count);
    if (*error != cudaSuccess) return true;
    if (shares > static_cast<std::size_t>(count)) {
        *error = cudaErrorInvalidValue;
        return true;
    }
    return false;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    std::size_t i = 0, first = 0;
    while (i < p) {
        Share s;
        s.first = first;
        s.count = n / p + (i < n % p);
        plan.push_back(s);
        first += s.count;
        ++i;
    }
    return plan;
}

// Share i runs from round(n * W_i / W) to round(n * W_{i+1} / W), W_i being the sum of the weights
// before i: each count is the difference of two roundings of numbers whose difference is the ideal, so
// it is within one of it; the boundaries add up to n by construction; a 0 weight repeats a boundary.
std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    double total = 0;
    for (double w : weights) {
        if (std::isnan(w) || w < 0) return {};
        total += w;
    }
    if (total <= 0) return {};

    auto boundary = [&](double prefix) -> std::size_t {
        if (prefix >= total) return n;
        const double at = std::round(static_cast<double>(n) * (prefix / total));
        return at <= 0 ? 0 : at >= static_cast<double>(n) ? n : static_cast<std::size_t>(at);
    };

    std::vector<Share> plan;
    plan.reserve(weights.size());
    double prefix = 0;
    std::size_t begin = 0;
    for (double w : weights) {
        prefix += w;
        const std::size_t end = w == 0 ? begin : boundary(prefix);
        plan.push_back(Share{begin, end - begin});
        begin = end;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* p = nullptr;
    // Portable: pinned for every device's copies, not only the current one's.
    if (cudaHostAlloc(reinterpret_cast<void**>(&p), n * sizeof(float), cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return p;
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms) device_ms->assign(plan.size(), 0.0f);
    cudaError_t status = cudaSuccess;
    if (too_many_shares(plan.size(), &status)) return status;

    std::vector<Device> devices(plan.size());

    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        Device& dev = devices[d];
        if ((status = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        dev.id = static_cast<int>(d);
        if ((status = cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking)) != cudaSuccess) break;
        if ((status = cudaMalloc(&dev.data, plan[d].count * sizeof(float))) != cudaSuccess) break;
        if (device_ms) {
            if ((status = cudaEventCreate(&dev.t0)) != cudaSuccess) break;
            if ((status = cudaEventCreate(&dev.t1)) != cudaSuccess) break;
        }
    }
    if (status != cudaSuccess) {
        release_all(devices);
        return status;
    }

    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Device& dev = devices[d];
        if (dev.id < 0) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        if ((status = cudaSetDevice(dev.id)) != cudaSuccess) break;
        if (dev.t0 && (status = cudaEventRecord(dev.t0, dev.stream)) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(dev.data, in + plan[d].first, bytes, cudaMemcpyHostToDevice, dev.stream)) !=
            cudaSuccess)
            break;
        scale_kernel<<<grid_for(plan[d].count), kThreads, 0, dev.stream>>>(dev.data, plan[d].count, factor);
        if ((status = cudaGetLastError()) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(out + plan[d].first, dev.data, bytes, cudaMemcpyDeviceToHost, dev.stream)) !=
            cudaSuccess)
            break;
        if (dev.t1) status = cudaEventRecord(dev.t1, dev.stream);
    }

    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Device& dev = devices[d];
        if (dev.id < 0) continue;
        status = cudaStreamSynchronize(dev.stream);
        if (status == cudaSuccess && device_ms) status = cudaEventElapsedTime(&(*device_ms)[d], dev.t0, dev.t1);
    }

    const cudaError_t released = release_all(devices);
    return status != cudaSuccess ? status : released;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    cudaError_t checked = cudaSuccess;
    if (too_many_shares(plan.size(), &checked)) return checked;

    std::vector<cudaError_t> results(plan.size(), cudaSuccess);
    {
        std::vector<std::jthread> workers;
        workers.reserve(plan.size());
        for (std::size_t d = 0; d < plan.size(); ++d) {
            if (plan[d].count == 0) continue;
            workers.emplace_back([&results, out, in, factor, share = plan[d], d] {
                const int device = static_cast<int>(d);
                const std::size_t bytes = share.count * sizeof(float);
                cudaError_t s = cudaSetDevice(device);
                float* data = nullptr;
                if (s == cudaSuccess) s = cudaMalloc(&data, bytes);
                if (s == cudaSuccess) s = cudaMemcpy(data, in + share.first, bytes, cudaMemcpyHostToDevice);
                if (s == cudaSuccess) {
                    scale_kernel<<<grid_for(share.count), kThreads>>>(data, share.count, factor);
                    s = cudaGetLastError();
                }
                if (s == cudaSuccess) s = cudaMemcpy(out + share.first, data, bytes, cudaMemcpyDeviceToHost);
                if (data) {
                    const cudaError_t f = cudaFree(data);
                    if (s == cudaSuccess) s = f;
                }
                results[d] = s;
            });
        }
    }   // every std::jthread joins here, after all of them were started

    for (cudaError_t s : results)
        if (s != cudaSuccess) return s;
    return cudaSuccess;
}
