// Style: kernel launches wrapped in one helper that returns the launch's error; an OpenMP parallel for over the busy
// devices (thread 0 is the caller, its device saved before and set again after the region); the remainders
// handed out by std::nth_element.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include <omp.h>

namespace {

constexpr unsigned kThreadsPerBlock = 256;
constexpr unsigned kBlockLimit = 65536;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

// Queues scale_kernel on `stream` of the current device.
cudaError_t launch_scale(float* data, std::size_t n, float factor, cudaStream_t stream)
{
    std::size_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
    blocks = std::clamp<std::size_t>(blocks, 1, kBlockLimit);
    scale_kernel<<<dim3(static_cast<unsigned>(blocks)), dim3(kThreadsPerBlock), 0, stream>>>(data, n, factor);
    return cudaGetLastError();
}

cudaError_t plan_fits_devices(std::size_t shares)
{
    int devices = 0;
    const cudaError_t status = cudaGetDeviceCount(&devices);
    if (status != cudaSuccess) return status;
    return shares > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

struct Resources {
    int device = -1;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t first = nullptr;
    cudaEvent_t last = nullptr;
};

cudaError_t release(Resources& r)
{
    if (r.device < 0) return cudaSuccess;
    cudaError_t status = cudaSetDevice(r.device);
    if (r.stream != nullptr) {
        const cudaError_t s = cudaStreamSynchronize(r.stream);
        if (status == cudaSuccess) status = s;
    }
    if (r.first != nullptr) cudaEventDestroy(r.first);
    if (r.last != nullptr) cudaEventDestroy(r.last);
    if (r.buffer != nullptr) cudaFree(r.buffer);
    if (r.stream != nullptr) cudaStreamDestroy(r.stream);
    r = Resources{};
    return status;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    const std::size_t each = n / p;
    const std::size_t extra = n % p;
    std::size_t first = 0;
    for (std::size_t i = 0; i < p; ++i) {
        Share share;
        share.first = first;
        share.count = each + (i < extra);
        first += share.count;
        plan.push_back(share);
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
    std::vector<std::size_t> count(k);
    std::vector<double> fraction(k);
    std::size_t sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        const double down = std::floor(ideal);
        count[i] = std::min(n, static_cast<std::size_t>(down));
        fraction[i] = weights[i] > 0 ? ideal - down : -1.0;
        sum += count[i];
    }
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto larger = [&](std::size_t a, std::size_t b) {
        return fraction[a] != fraction[b] ? fraction[a] > fraction[b] : a < b;
    };
    const std::size_t missing = std::min(k, n - std::min(n, sum));
    if (missing > 0) {
        // The `missing` largest fractions end up in front (in any order).
        std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(missing - 1), order.end(), larger);
        for (std::size_t j = 0; j < missing; ++j)
            if (fraction[order[j]] >= 0) ++count[order[j]];
    }

    std::vector<Share> plan(k);
    std::size_t first = 0;
    for (std::size_t i = 0; i < k; ++i) {
        plan[i] = Share{first, count[i]};
        first += count[i];
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* memory = nullptr;
    if (cudaMallocHost(&memory, n * sizeof(float)) != cudaSuccess) {
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
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    cudaError_t status = plan_fits_devices(plan.size());
    if (status != cudaSuccess) return status;
    int caller = 0;
    status = cudaGetDevice(&caller);
    if (status != cudaSuccess) return status;

    std::vector<Resources> res(plan.size());
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        Resources& r = res[d];
        status = cudaSetDevice(static_cast<int>(d));
        if (status != cudaSuccess) break;
        r.device = static_cast<int>(d);
        status = cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking);
        if (status == cudaSuccess) status = cudaMalloc(&r.buffer, plan[d].count * sizeof(float));
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventCreate(&r.first);
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventCreate(&r.last);
    }
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Resources& r = res[d];
        if (r.device < 0) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        status = cudaSetDevice(r.device);
        if (status == cudaSuccess && r.first != nullptr) status = cudaEventRecord(r.first, r.stream);
        if (status == cudaSuccess)
            status = cudaMemcpyAsync(r.buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice, r.stream);
        if (status == cudaSuccess) status = launch_scale(r.buffer, plan[d].count, factor, r.stream);
        if (status == cudaSuccess)
            status = cudaMemcpyAsync(out + plan[d].first, r.buffer, bytes, cudaMemcpyDeviceToHost, r.stream);
        if (status == cudaSuccess && r.last != nullptr) status = cudaEventRecord(r.last, r.stream);
    }
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Resources& r = res[d];
        if (r.device < 0) continue;
        status = cudaStreamSynchronize(r.stream);
        if (status == cudaSuccess && device_ms != nullptr)
            status = cudaEventElapsedTime(&(*device_ms)[d], r.first, r.last);
    }
    for (Resources& r : res) {
        const cudaError_t released = release(r);
        if (status == cudaSuccess) status = released;
    }
    const cudaError_t restored = cudaSetDevice(caller);
    return status == cudaSuccess ? restored : status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    const cudaError_t fits = plan_fits_devices(plan.size());
    if (fits != cudaSuccess) return fits;

    std::vector<int> busy;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) busy.push_back(static_cast<int>(d));
    if (busy.empty()) return cudaSuccess;

    int caller = 0;
    const cudaError_t asked = cudaGetDevice(&caller);
    if (asked != cudaSuccess) return asked;

    const int n_busy = static_cast<int>(busy.size());
    std::vector<cudaError_t> results(busy.size(), cudaSuccess);
#pragma omp parallel for num_threads(n_busy) schedule(static, 1)
    for (int j = 0; j < n_busy; ++j) {
        const int device = busy[static_cast<std::size_t>(j)];
        const Share share = plan[static_cast<std::size_t>(device)];
        const std::size_t bytes = share.count * sizeof(float);
        cudaError_t s = cudaSetDevice(device);
        float* buffer = nullptr;
        if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
        if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
        if (s == cudaSuccess) s = launch_scale(buffer, share.count, factor, 0);
        if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
        if (buffer != nullptr) {
            const cudaError_t f = cudaFree(buffer);
            if (s == cudaSuccess) s = f;
        }
        results[static_cast<std::size_t>(j)] = s;
    }
    const cudaError_t restored = cudaSetDevice(caller);   // thread 0 was this thread
    for (cudaError_t s : results)
        if (s != cudaSuccess) return s;
    return restored;
}
