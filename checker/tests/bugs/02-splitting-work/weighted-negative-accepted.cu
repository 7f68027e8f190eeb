// I only refuse weights whose total is 0 or less; I never checked single weights for being negative.
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

struct Slot {
    bool used = false;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t begin = nullptr;
    cudaEvent_t end = nullptr;
};

// Frees every slot with its device current when the function leaves, however it leaves.
class SlotsCleanup {
public:
    explicit SlotsCleanup(std::vector<Slot>& slots) : slots_(slots) {}
    ~SlotsCleanup()
    {
        for (std::size_t d = 0; d < slots_.size(); ++d) {
            Slot& s = slots_[d];
            if (!s.used) continue;
            cudaSetDevice(static_cast<int>(d));
            if (s.stream) cudaStreamSynchronize(s.stream);
            if (s.begin) cudaEventDestroy(s.begin);
            if (s.end) cudaEventDestroy(s.end);
            if (s.buffer) cudaFree(s.buffer);
            if (s.stream) cudaStreamDestroy(s.stream);
        }
    }
    SlotsCleanup(const SlotsCleanup&) = delete;
    SlotsCleanup& operator=(const SlotsCleanup&) = delete;

private:
    std::vector<Slot>& slots_;
};

#define TRY(call)                                   \
    do {                                            \
        const cudaError_t status_ = (call);         \
        if (status_ != cudaSuccess) return status_; \
    } while (0)

cudaError_t device_count_covers(std::size_t shares)
{
    int count = 0;
    TRY(cudaGetDeviceCount(&count));
    return shares <= static_cast<std::size_t>(count) ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts < 1) return plan;
    plan.resize(static_cast<std::size_t>(parts));
    const std::size_t each = n / plan.size();
    std::size_t left_over = n % plan.size();
    std::size_t cursor = 0;
    for (Share& share : plan) {
        share.first = cursor;
        share.count = each;
        if (left_over > 0) {
            ++share.count;
            --left_over;
        }
        cursor += share.count;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(total > 0.0)) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> count(k);
    std::vector<double> remainder(k);
    std::size_t sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        count[i] = static_cast<std::size_t>(std::floor(ideal));
        remainder[i] = weights[i] > 0.0 ? ideal - std::floor(ideal) : -1.0;   // a 0 weight never gets one more
        sum += count[i];
    }
    const std::size_t missing = std::min(n - std::min(n, sum), k);
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(missing), order.end(),
                      [&](std::size_t a, std::size_t b) {
                          return remainder[a] != remainder[b] ? remainder[a] > remainder[b] : a < b;
                      });
    for (std::size_t j = 0; j < missing; ++j)
        if (remainder[order[j]] >= 0.0) ++count[order[j]];

    std::vector<Share> plan(k);
    std::size_t at = 0;
    for (std::size_t i = 0; i < k; ++i) {
        plan[i] = Share{at, count[i]};
        at += count[i];
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* p = nullptr;
    const cudaError_t status = cudaMallocHost(&p, n * sizeof(float));
    if (status != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return static_cast<float*>(p);
}

void free_host_buffer(float* buffer)
{
    if (buffer == nullptr) return;
    cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) {
        device_ms->resize(plan.size());
        std::fill(device_ms->begin(), device_ms->end(), 0.0f);
    }
    TRY(device_count_covers(plan.size()));

    CurrentDeviceGuard guard;   // declared before the cleanup, so it runs after it
    std::vector<Slot> slots(plan.size());
    SlotsCleanup cleanup(slots);

    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        Slot& s = slots[d];
        TRY(cudaSetDevice(static_cast<int>(d)));
        s.used = true;
        TRY(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
        TRY(cudaMalloc(reinterpret_cast<void**>(&s.buffer), plan[d].count * sizeof(float)));
        if (device_ms != nullptr) {
            TRY(cudaEventCreate(&s.begin));
            TRY(cudaEventCreate(&s.end));
        }
    }
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (!slots[d].used) continue;
        Slot& s = slots[d];
        const std::size_t bytes = plan[d].count * sizeof(float);
        TRY(cudaSetDevice(static_cast<int>(d)));
        if (s.begin) TRY(cudaEventRecord(s.begin, s.stream));
        TRY(cudaMemcpyAsync(s.buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice, s.stream));
        scale_kernel<<<blocks_for(plan[d].count), threads_per_block, 0, s.stream>>>(s.buffer, plan[d].count, factor);
        TRY(cudaGetLastError());
        TRY(cudaMemcpyAsync(out + plan[d].first, s.buffer, bytes, cudaMemcpyDeviceToHost, s.stream));
        if (s.end) TRY(cudaEventRecord(s.end, s.stream));
    }
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (!slots[d].used) continue;
        TRY(cudaStreamSynchronize(slots[d].stream));
        if (device_ms != nullptr) TRY(cudaEventElapsedTime(&(*device_ms)[d], slots[d].begin, slots[d].end));
    }
    return cudaSuccess;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    TRY(device_count_covers(plan.size()));

    std::vector<int> devices;   // the non-empty shares, one OpenMP thread each
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) devices.push_back(static_cast<int>(d));
    if (devices.empty()) return cudaSuccess;

    CurrentDeviceGuard guard;   // the calling thread takes part in the loop as OpenMP's master
    std::vector<cudaError_t> status(devices.size(), cudaSuccess);
    const int workers = static_cast<int>(devices.size());

#pragma omp parallel for num_threads(workers) schedule(static, 1)
    for (int k = 0; k < workers; ++k) {
        const int d = devices[static_cast<std::size_t>(k)];
        const Share share = plan[static_cast<std::size_t>(d)];
        const std::size_t bytes = share.count * sizeof(float);
        cudaError_t s = cudaSetDevice(d);   // OpenMP threads start on device 0 too
        float* buffer = nullptr;
        if (s == cudaSuccess) s = cudaMalloc(reinterpret_cast<void**>(&buffer), bytes);
        if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
        if (s == cudaSuccess) {
            scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
            s = cudaGetLastError();
        }
        if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
        if (buffer != nullptr) {
            const cudaError_t freed = cudaFree(buffer);
            if (s == cudaSuccess) s = freed;
        }
        status[static_cast<std::size_t>(k)] = s;
    }

    for (cudaError_t s : status)
        if (s != cudaSuccess) return s;
    return cudaSuccess;
}
