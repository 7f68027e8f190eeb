// Style: each share is cut in two halves on two non-blocking streams of its device, so that one half's copies
// overlap the other's kernel; the timing events are joined across the two streams with cudaStreamWaitEvent.
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
constexpr int kLanes = 2;

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

struct DeviceWork {
    int device = -1;
    Share share;
    cudaStream_t lane[kLanes] = {nullptr, nullptr};
    float* buffer = nullptr;
    cudaEvent_t started = nullptr;
    cudaEvent_t lane_done = nullptr;   // the second lane's end, waited for by the first
    cudaEvent_t finished = nullptr;
};

cudaError_t prepare(DeviceWork& w, bool timed)
{
    RETURN_IF_FAILED(cudaSetDevice(w.device));
    for (cudaStream_t& s : w.lane) RETURN_IF_FAILED(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    RETURN_IF_FAILED(cudaMalloc(&w.buffer, w.share.count * sizeof(float)));
    RETURN_IF_FAILED(cudaEventCreateWithFlags(&w.lane_done, timed ? cudaEventDefault : cudaEventDisableTiming));
    if (timed) {
        RETURN_IF_FAILED(cudaEventCreate(&w.started));
        RETURN_IF_FAILED(cudaEventCreate(&w.finished));
    }
    return cudaSuccess;
}

cudaError_t issue(DeviceWork& w, float* out, const float* in, float factor)
{
    RETURN_IF_FAILED(cudaSetDevice(w.device));
    if (w.started != nullptr) {
        RETURN_IF_FAILED(cudaEventRecord(w.started, w.lane[0]));
        RETURN_IF_FAILED(cudaStreamWaitEvent(w.lane[1], w.started, 0));   // lane 1 starts after the start mark
    }
    const std::size_t half = (w.share.count + 1) / 2;
    for (int l = 0; l < kLanes; ++l) {
        const std::size_t offset = l == 0 ? 0 : half;
        const std::size_t count = l == 0 ? half : w.share.count - half;
        if (count == 0) continue;
        const std::size_t bytes = count * sizeof(float);
        float* part = w.buffer + offset;
        RETURN_IF_FAILED(cudaMemcpyAsync(part, in + w.share.first + offset, bytes, cudaMemcpyHostToDevice, w.lane[l]));
        scale_kernel<<<blocks_for(count), threads_per_block, 0, w.lane[l]>>>(part, count, factor);
        RETURN_IF_FAILED(cudaGetLastError());
        RETURN_IF_FAILED(cudaMemcpyAsync(out + w.share.first + offset, part, bytes, cudaMemcpyDeviceToHost, w.lane[l]));
    }
    // Lane 0 waits for lane 1, so that lane 0's end is the end of the whole share.
    RETURN_IF_FAILED(cudaEventRecord(w.lane_done, w.lane[1]));
    RETURN_IF_FAILED(cudaStreamWaitEvent(w.lane[0], w.lane_done, 0));
    if (w.finished != nullptr) RETURN_IF_FAILED(cudaEventRecord(w.finished, w.lane[0]));
    return cudaSuccess;
}

cudaError_t release(DeviceWork& w)
{
    if (w.device < 0) return cudaSuccess;
    cudaError_t first = cudaSetDevice(w.device);
    auto keep = [&first](cudaError_t s) {
        if (first == cudaSuccess) first = s;
    };
    for (cudaStream_t s : w.lane)
        if (s != nullptr) keep(cudaStreamSynchronize(s));
    for (cudaEvent_t e : {w.started, w.lane_done, w.finished})
        if (e != nullptr) keep(cudaEventDestroy(e));
    if (w.buffer != nullptr) keep(cudaFree(w.buffer));
    for (cudaStream_t s : w.lane)
        if (s != nullptr) keep(cudaStreamDestroy(s));
    w = DeviceWork{};
    return first;
}

cudaError_t check_plan(std::size_t shares)
{
    int devices = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&devices));
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

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<double> fractions(k);
    std::size_t given = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        counts[i] = std::min(n, static_cast<std::size_t>(std::floor(ideal)));
        fractions[i] = ideal - static_cast<double>(counts[i]);
        given += counts[i];
    }
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    for (std::size_t i : order) {
        if (given >= n) break;
        if (weights[i] == 0) continue;
        ++counts[i];
        ++given;
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
    RETURN_IF_FAILED(check_plan(plan.size()));

    CurrentDeviceGuard guard;
    const bool timed = device_ms != nullptr;
    std::vector<DeviceWork> work(plan.size());
    cudaError_t status = cudaSuccess;
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        work[d].device = static_cast<int>(d);
        work[d].share = plan[d];
        status = prepare(work[d], timed);
    }
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d)
        if (work[d].device >= 0) status = issue(work[d], out, in, factor);
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (work[d].device < 0) continue;
        status = cudaStreamSynchronize(work[d].lane[0]);   // lane 0 waited for lane 1
        if (status == cudaSuccess && timed)
            status = cudaEventElapsedTime(&(*device_ms)[d], work[d].started, work[d].finished);
    }
    for (DeviceWork& w : work) {
        const cudaError_t released = release(w);
        if (status == cudaSuccess) status = released;
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    RETURN_IF_FAILED(check_plan(plan.size()));
    std::vector<cudaError_t> statuses(plan.size(), cudaSuccess);
    std::vector<std::thread> workers;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        workers.emplace_back([&, d] {
            const Share share = plan[d];
            const std::size_t bytes = share.count * sizeof(float);
            cudaError_t s = cudaSetDevice(static_cast<int>(d));
            float* buffer = nullptr;
            if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
            if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
            if (s == cudaSuccess) {
                scale_kernel<<<blocks_for(share.count), threads_per_block>>>(buffer, share.count, factor);
                s = cudaGetLastError();
            }
            if (s == cudaSuccess) s = cudaDeviceSynchronize();
            if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
            if (buffer != nullptr) {
                const cudaError_t f = cudaFree(buffer);
                if (s == cudaSuccess) s = f;
            }
            statuses[d] = s;
        });
    }
    for (std::thread& w : workers) w.join();
    for (cudaError_t s : statuses)
        if (s != cudaSuccess) return s;
    return cudaSuccess;
}
