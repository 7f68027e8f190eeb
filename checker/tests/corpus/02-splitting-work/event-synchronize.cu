// Style: waits on each device's last event with cudaEventSynchronize instead of the stream; an OpenMP team
// (thread 0 is the caller) that saves and restores the caller's device by hand; long double ideals.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include <omp.h>

namespace {

constexpr int kBlockSize = 256;
constexpr int kGridSize = 1024;   // fixed grid; the loop strides over the rest

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

struct Lane {
    bool made = false;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t start = nullptr;   // only when timed
    cudaEvent_t done = nullptr;    // always: the host waits on it
};

void note(cudaError_t& first, cudaError_t status)
{
    if (first == cudaSuccess && status != cudaSuccess) first = status;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    const std::size_t q = n / p, r = n % p;
    for (std::size_t i = 0, first = 0; i < p; ++i) {
        Share s;
        s.first = first;
        s.count = i < r ? q + 1 : q;
        first += s.count;
        plan.push_back(s);
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    long double total = 0;
    for (double w : weights) {
        if (!(w >= 0)) return {};   // negative or NaN
        total += w;
    }
    if (!(total > 0)) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<std::pair<long double, std::size_t>> rank;   // (fraction, index)
    std::size_t sum = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const long double ideal = static_cast<long double>(n) * weights[i] / total;
        const long double whole = std::floor(ideal);
        counts[i] = std::min(n, static_cast<std::size_t>(whole));
        sum += counts[i];
        if (weights[i] > 0) rank.emplace_back(ideal - whole, i);
    }
    std::sort(rank.begin(), rank.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t j = 0; j < rank.size() && sum < n; ++j, ++sum) ++counts[rank[j].second];

    std::vector<Share> plan(k);
    std::size_t first = 0;
    for (std::size_t i = 0; i < k; ++i) {
        plan[i] = Share{first, counts[i]};
        first += counts[i];
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* p = nullptr;
    if (cudaMallocHost(&p, n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();   // leave no error behind
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
    const bool timed = device_ms != nullptr;
    if (timed) device_ms->assign(plan.size(), 0.0f);

    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) return status;
    if (plan.size() > static_cast<std::size_t>(count)) return cudaErrorInvalidValue;

    int caller = 0;
    status = cudaGetDevice(&caller);
    if (status != cudaSuccess) return status;

    std::vector<Lane> lanes(plan.size());
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        Lane& lane = lanes[d];
        note(status, cudaSetDevice(static_cast<int>(d)));
        if (status != cudaSuccess) break;
        lane.made = true;
        note(status, cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
        if (status == cudaSuccess) note(status, cudaMalloc(&lane.buffer, plan[d].count * sizeof(float)));
        if (status == cudaSuccess && timed) note(status, cudaEventCreate(&lane.start));
        if (status == cudaSuccess)
            note(status, cudaEventCreateWithFlags(&lane.done, timed ? cudaEventDefault : cudaEventDisableTiming));
    }

    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (!lanes[d].made) continue;
        Lane& lane = lanes[d];
        const std::size_t bytes = plan[d].count * sizeof(float);
        note(status, cudaSetDevice(static_cast<int>(d)));
        if (status == cudaSuccess && timed) note(status, cudaEventRecord(lane.start, lane.stream));
        if (status == cudaSuccess)
            note(status, cudaMemcpyAsync(lane.buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice, lane.stream));
        if (status == cudaSuccess) {
            scale_kernel<<<kGridSize, kBlockSize, 0, lane.stream>>>(lane.buffer, plan[d].count, factor);
            note(status, cudaGetLastError());
        }
        if (status == cudaSuccess)
            note(status, cudaMemcpyAsync(out + plan[d].first, lane.buffer, bytes, cudaMemcpyDeviceToHost, lane.stream));
        if (status == cudaSuccess) note(status, cudaEventRecord(lane.done, lane.stream));
    }

    // The host waits for each device's last event: everything queued before it on that stream is done.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (!lanes[d].made) continue;
        note(status, cudaEventSynchronize(lanes[d].done));
        if (status == cudaSuccess && timed)
            note(status, cudaEventElapsedTime(&(*device_ms)[d], lanes[d].start, lanes[d].done));
    }

    for (std::size_t d = 0; d < lanes.size(); ++d) {
        Lane& lane = lanes[d];
        if (!lane.made) continue;
        note(status, cudaSetDevice(static_cast<int>(d)));
        if (lane.stream != nullptr) note(status, cudaStreamSynchronize(lane.stream));   // on an error path too
        if (lane.start != nullptr) cudaEventDestroy(lane.start);
        if (lane.done != nullptr) cudaEventDestroy(lane.done);
        if (lane.buffer != nullptr) cudaFree(lane.buffer);
        if (lane.stream != nullptr) cudaStreamDestroy(lane.stream);
    }
    note(status, cudaSetDevice(caller));
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    int count = 0;
    const cudaError_t counted = cudaGetDeviceCount(&count);
    if (counted != cudaSuccess) return counted;
    if (plan.size() > static_cast<std::size_t>(count)) return cudaErrorInvalidValue;

    std::vector<int> busy;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count != 0) busy.push_back(static_cast<int>(d));
    if (busy.empty()) return cudaSuccess;

    int caller = 0;
    const cudaError_t asked = cudaGetDevice(&caller);
    if (asked != cudaSuccess) return asked;

    std::vector<cudaError_t> result(busy.size(), cudaSuccess);
    const int team = static_cast<int>(busy.size());
#pragma omp parallel num_threads(team)
    {
        // One member per non-empty share; member 0 is this very thread.
        for (int k = omp_get_thread_num(); k < team; k += omp_get_num_threads()) {
            const int device = busy[static_cast<std::size_t>(k)];
            const Share share = plan[static_cast<std::size_t>(device)];
            const std::size_t bytes = share.count * sizeof(float);
            cudaError_t s = cudaSetDevice(device);
            float* buffer = nullptr;
            if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
            if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
            if (s == cudaSuccess) {
                scale_kernel<<<kGridSize, kBlockSize>>>(buffer, share.count, factor);
                s = cudaGetLastError();
            }
            if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
            if (buffer != nullptr) {
                const cudaError_t f = cudaFree(buffer);
                if (s == cudaSuccess) s = f;
            }
            result[static_cast<std::size_t>(k)] = s;
        }
    }

    // Member 0's cudaSetDevice changed this thread's current device: give the caller theirs back.
    const cudaError_t restored = cudaSetDevice(caller);
    for (cudaError_t s : result)
        if (s != cudaSuccess) return s;
    return restored;
}
