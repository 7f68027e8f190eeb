// Style: an OpenMP team (thread 0 is the caller, guarded) whose members record the first error in time inside
// a critical section; scale_on_devices ends each round trip with a cudaEventBlockingSync event and waits on
// those events, last device first; std::generate builds the even plan.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

#include <omp.h>

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

constexpr unsigned kBlock = 256;
constexpr unsigned kGridMax = 65536;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned grid(std::size_t n)
{
    const std::size_t g = (n + kBlock - 1) / kBlock;
    return g >= kGridMax ? kGridMax : g == 0 ? 1u : static_cast<unsigned>(g);
}

cudaError_t too_many(std::size_t shares)
{
    int devices = 0;
    const cudaError_t s = cudaGetDeviceCount(&devices);
    if (s != cudaSuccess) return s;
    return shares > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

struct Per {
    bool active = false;
    cudaStream_t stream = nullptr;
    float* data = nullptr;
    cudaEvent_t begin = nullptr;   // only when timed
    cudaEvent_t end = nullptr;     // always; the host sleeps on it
};

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return {};
    const std::size_t p = static_cast<std::size_t>(parts);
    std::vector<Share> plan(p);
    std::size_t i = 0, next = 0;
    std::generate(plan.begin(), plan.end(), [&] {
        const Share s{next, n / p + (i < n % p ? 1 : 0)};
        next += s.count;
        ++i;
        return s;
    });
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
    std::size_t placed = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        count[i] = std::min(n, static_cast<std::size_t>(std::floor(ideal)));
        fraction[i] = ideal - static_cast<double>(count[i]);
        placed += count[i];
    }
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < k; ++i)
        if (weights[i] > 0) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fraction[a] > fraction[b]; });
    for (std::size_t j = 0; j < order.size() && placed < n; ++j, ++placed) ++count[order[j]];

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
    void* p = nullptr;
    if (cudaHostAlloc(&p, n * sizeof(float), cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return static_cast<float*>(p);
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    if (const cudaError_t s = too_many(plan.size()); s != cudaSuccess) return s;

    CurrentDeviceGuard guard;
    std::vector<Per> per(plan.size());
    cudaError_t status = cudaSuccess;

    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        Per& p = per[d];
        if ((status = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        p.active = true;
        status = cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking);
        if (status == cudaSuccess) status = cudaMalloc(&p.data, plan[d].count * sizeof(float));
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventCreateWithFlags(&p.begin, cudaEventBlockingSync);
        if (status == cudaSuccess)
            status = cudaEventCreateWithFlags(
                &p.end, device_ms != nullptr ? cudaEventBlockingSync : (cudaEventBlockingSync | cudaEventDisableTiming));
    }

    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Per& p = per[d];
        if (!p.active) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        if ((status = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        if (p.begin != nullptr && (status = cudaEventRecord(p.begin, p.stream)) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(p.data, in + plan[d].first, bytes, cudaMemcpyHostToDevice, p.stream)) !=
            cudaSuccess)
            break;
        scale_kernel<<<grid(plan[d].count), kBlock, 0, p.stream>>>(p.data, plan[d].count, factor);
        if ((status = cudaGetLastError()) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(out + plan[d].first, p.data, bytes, cudaMemcpyDeviceToHost, p.stream)) !=
            cudaSuccess)
            break;
        status = cudaEventRecord(p.end, p.stream);
    }

    // Wait from the last device to the first: the order does not matter, every one is waited for.
    for (std::size_t d = plan.size(); d-- > 0 && status == cudaSuccess;) {
        Per& p = per[d];
        if (!p.active) continue;
        status = cudaEventSynchronize(p.end);
        if (status == cudaSuccess && device_ms != nullptr) status = cudaEventElapsedTime(&(*device_ms)[d], p.begin, p.end);
    }

    for (std::size_t d = 0; d < per.size(); ++d) {
        Per& p = per[d];
        if (!p.active) continue;
        cudaSetDevice(static_cast<int>(d));
        if (p.stream != nullptr) cudaStreamSynchronize(p.stream);
        if (p.begin != nullptr) cudaEventDestroy(p.begin);
        if (p.end != nullptr) cudaEventDestroy(p.end);
        if (p.data != nullptr) cudaFree(p.data);
        if (p.stream != nullptr) cudaStreamDestroy(p.stream);
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const cudaError_t s = too_many(plan.size()); s != cudaSuccess) return s;

    std::vector<std::size_t> busy;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) busy.push_back(d);
    if (busy.empty()) return cudaSuccess;

    CurrentDeviceGuard guard;   // this thread becomes member 0 of the team and changes its device
    cudaError_t first_error = cudaSuccess;
#pragma omp parallel num_threads(static_cast<int>(busy.size()))
    {
        const int me = omp_get_thread_num();
        const int team = omp_get_num_threads();
        for (std::size_t j = static_cast<std::size_t>(me); j < busy.size(); j += static_cast<std::size_t>(team)) {
            const std::size_t d = busy[j];
            const Share s = plan[d];
            const std::size_t bytes = s.count * sizeof(float);
            cudaError_t err = cudaSetDevice(static_cast<int>(d));
            float* data = nullptr;
            if (err == cudaSuccess) err = cudaMalloc(&data, bytes);
            if (err == cudaSuccess) err = cudaMemcpy(data, in + s.first, bytes, cudaMemcpyHostToDevice);
            if (err == cudaSuccess) {
                scale_kernel<<<grid(s.count), kBlock>>>(data, s.count, factor);
                err = cudaGetLastError();
            }
            if (err == cudaSuccess) err = cudaMemcpy(out + s.first, data, bytes, cudaMemcpyDeviceToHost);
            if (data != nullptr) {
                const cudaError_t freed = cudaFree(data);
                if (err == cudaSuccess) err = freed;
            }
            if (err != cudaSuccess) {
#pragma omp critical(first_cuda_error)
                {
                    if (first_error == cudaSuccess) first_error = err;
                }
            }
        }
    }
    return first_error;
}
