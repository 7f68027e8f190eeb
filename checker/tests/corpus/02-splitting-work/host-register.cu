// Style: host buffers from std::aligned_alloc pinned in place with cudaHostRegister (and unregistered before
// free); cudaMemcpyAsync with cudaMemcpyDefault; worker threads on cudaStreamPerThread.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kPage = 4096;
constexpr unsigned kThreads = 512;
constexpr unsigned kMaxBlocks = 8192;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned grid_for(std::size_t n)
{
    const std::size_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), kMaxBlocks));
}

class RestoreDevice {
public:
    RestoreDevice() : ok_(cudaGetDevice(&device_) == cudaSuccess)
    {
        if (!ok_) cudaGetLastError();
    }
    ~RestoreDevice()
    {
        if (ok_) cudaSetDevice(device_);
    }
    RestoreDevice(const RestoreDevice&) = delete;
    RestoreDevice& operator=(const RestoreDevice&) = delete;

private:
    int device_ = 0;
    bool ok_ = false;
};

cudaError_t validate(std::size_t shares)
{
    int n = 0;
    const cudaError_t status = cudaGetDeviceCount(&n);
    if (status != cudaSuccess) return status;
    if (static_cast<std::size_t>(n) < shares) return cudaErrorInvalidValue;
    return cudaSuccess;
}

struct PerDevice {
    int id = -1;
    cudaStream_t stream = nullptr;
    float* data = nullptr;
    cudaEvent_t from = nullptr;
    cudaEvent_t to = nullptr;
};

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return {};
    std::vector<Share> plan(static_cast<std::size_t>(parts));
    const std::size_t p = plan.size();
    std::size_t at = 0;
    for (std::size_t i = 0; i < p; ++i) {
        plan[i].first = at;
        plan[i].count = n / p;
        if (i < n % p) plan[i].count += 1;
        at += plan[i].count;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    double total = 0;
    for (double w : weights) {
        if (std::isnan(w) || w < 0) return {};
        total += w;
    }
    if (total <= 0) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<double> rest(k);
    std::size_t used = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double exact = static_cast<double>(n) * weights[i] / total;
        counts[i] = std::min(n, static_cast<std::size_t>(std::floor(exact)));
        rest[i] = exact - static_cast<double>(counts[i]);
        used += counts[i];
    }
    std::vector<std::size_t> by_rest(k);
    std::iota(by_rest.begin(), by_rest.end(), std::size_t{0});
    std::stable_sort(by_rest.begin(), by_rest.end(), [&](std::size_t a, std::size_t b) { return rest[a] > rest[b]; });
    for (std::size_t i : by_rest) {
        if (used == n) break;
        if (weights[i] == 0) continue;
        ++counts[i];
        ++used;
    }

    std::vector<Share> plan(k);
    for (std::size_t i = 0, at = 0; i < k; at += counts[i], ++i) plan[i] = Share{at, counts[i]};
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    const std::size_t bytes = (n * sizeof(float) + kPage - 1) / kPage * kPage;   // whole pages
    void* memory = std::aligned_alloc(kPage, bytes);
    if (memory == nullptr) return nullptr;
    if (cudaHostRegister(memory, bytes, cudaHostRegisterPortable) != cudaSuccess) {
        cudaGetLastError();   // leave no error behind
        std::free(memory);
        return nullptr;
    }
    return static_cast<float*>(memory);
}

void free_host_buffer(float* buffer)
{
    if (buffer == nullptr) return;
    cudaHostUnregister(buffer);   // unpinned first, then freed
    std::free(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms) device_ms->assign(plan.size(), 0.0f);
    if (const cudaError_t v = validate(plan.size()); v != cudaSuccess) return v;

    RestoreDevice restore;
    std::vector<PerDevice> devs(plan.size());
    cudaError_t err = cudaSuccess;

    for (std::size_t d = 0; d < plan.size() && err == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        PerDevice& pd = devs[d];
        if ((err = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        pd.id = static_cast<int>(d);
        if ((err = cudaStreamCreateWithFlags(&pd.stream, cudaStreamNonBlocking)) != cudaSuccess) break;
        if ((err = cudaMalloc(&pd.data, plan[d].count * sizeof(float))) != cudaSuccess) break;
        if (device_ms) {
            if ((err = cudaEventCreate(&pd.from)) != cudaSuccess) break;
            if ((err = cudaEventCreate(&pd.to)) != cudaSuccess) break;
        }
    }

    for (std::size_t d = 0; d < plan.size() && err == cudaSuccess; ++d) {
        PerDevice& pd = devs[d];
        if (pd.id < 0) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        if ((err = cudaSetDevice(pd.id)) != cudaSuccess) break;
        if (pd.from && (err = cudaEventRecord(pd.from, pd.stream)) != cudaSuccess) break;
        if ((err = cudaMemcpyAsync(pd.data, in + plan[d].first, bytes, cudaMemcpyDefault, pd.stream)) != cudaSuccess)
            break;
        scale_kernel<<<grid_for(plan[d].count), kThreads, 0, pd.stream>>>(pd.data, plan[d].count, factor);
        if ((err = cudaGetLastError()) != cudaSuccess) break;
        if ((err = cudaMemcpyAsync(out + plan[d].first, pd.data, bytes, cudaMemcpyDefault, pd.stream)) != cudaSuccess)
            break;
        if (pd.to && (err = cudaEventRecord(pd.to, pd.stream)) != cudaSuccess) break;
    }

    for (std::size_t d = 0; d < plan.size() && err == cudaSuccess; ++d) {
        PerDevice& pd = devs[d];
        if (pd.id < 0) continue;
        if ((err = cudaStreamSynchronize(pd.stream)) != cudaSuccess) break;
        if (device_ms) err = cudaEventElapsedTime(&(*device_ms)[d], pd.from, pd.to);
    }

    for (PerDevice& pd : devs) {
        if (pd.id < 0) continue;
        cudaSetDevice(pd.id);
        if (pd.stream) cudaStreamSynchronize(pd.stream);
        if (pd.from) cudaEventDestroy(pd.from);
        if (pd.to) cudaEventDestroy(pd.to);
        if (pd.data) cudaFree(pd.data);
        if (pd.stream) cudaStreamDestroy(pd.stream);
    }
    return err;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const cudaError_t v = validate(plan.size()); v != cudaSuccess) return v;

    std::vector<cudaError_t> errs(plan.size(), cudaSuccess);
    std::vector<std::thread> pool;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        pool.emplace_back([&errs, &plan, d, out, in, factor] {
            const Share s = plan[d];
            const std::size_t bytes = s.count * sizeof(float);
            cudaError_t e = cudaSetDevice(static_cast<int>(d));
            float* data = nullptr;
            if (e == cudaSuccess) e = cudaMalloc(&data, bytes);
            if (e == cudaSuccess) e = cudaMemcpyAsync(data, in + s.first, bytes, cudaMemcpyDefault, cudaStreamPerThread);
            if (e == cudaSuccess) {
                scale_kernel<<<grid_for(s.count), kThreads, 0, cudaStreamPerThread>>>(data, s.count, factor);
                e = cudaGetLastError();
            }
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(out + s.first, data, bytes, cudaMemcpyDefault, cudaStreamPerThread);
            if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
            if (data) {
                cudaStreamSynchronize(cudaStreamPerThread);
                const cudaError_t f = cudaFree(data);
                if (e == cudaSuccess) e = f;
            }
            errs[d] = e;
        });
    }
    for (auto& t : pool) t.join();
    for (cudaError_t e : errs)
        if (e != cudaSuccess) return e;
    return cudaSuccess;
}
