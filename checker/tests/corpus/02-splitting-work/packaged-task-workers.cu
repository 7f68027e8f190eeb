// Style: std::packaged_task workers on std::threads, each with a non-blocking stream of its own; the buffer is
// released only after its stream has been waited for; remainders ranked in a small struct.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <future>
#include <numeric>
#include <thread>
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

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 65536;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned blocks_for(std::size_t n)
{
    const std::size_t b = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::clamp<std::size_t>(b, 1, kMaxBlocks));
}

cudaError_t check_plan(std::size_t shares)
{
    int devices = 0;
    const cudaError_t s = cudaGetDeviceCount(&devices);
    if (s != cudaSuccess) return s;
    return shares > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

struct Lane {
    bool used = false;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
};

cudaError_t run_on_own_thread(int device, float* out, const float* in, float factor, Share share)
{
    cudaError_t s = cudaSetDevice(device);
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    const std::size_t bytes = share.count * sizeof(float);
    if (s == cudaSuccess) s = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
    if (s == cudaSuccess) s = cudaMemcpyAsync(buffer, in + share.first, bytes, cudaMemcpyHostToDevice, stream);
    if (s == cudaSuccess) {
        scale_kernel<<<blocks_for(share.count), kThreads, 0, stream>>>(buffer, share.count, factor);
        s = cudaGetLastError();
    }
    if (s == cudaSuccess) s = cudaMemcpyAsync(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost, stream);
    if (stream != nullptr) {
        const cudaError_t w = cudaStreamSynchronize(stream);
        if (s == cudaSuccess) s = w;
    }
    if (buffer != nullptr) {
        const cudaError_t f = cudaFree(buffer);
        if (s == cudaSuccess) s = f;
    }
    if (stream != nullptr) cudaStreamDestroy(stream);
    return s;
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

    struct Entry {
        std::size_t count;
        double fraction;
    };
    std::vector<Entry> entries;
    std::size_t placed = 0;
    for (double w : weights) {
        const double ideal = static_cast<double>(n) * w / total;
        const std::size_t down = std::min(n, static_cast<std::size_t>(std::floor(ideal)));
        entries.push_back({down, w > 0 ? ideal - static_cast<double>(down) : -1.0});
        placed += down;
    }
    std::vector<std::size_t> rank(entries.size());
    std::iota(rank.begin(), rank.end(), std::size_t{0});
    std::stable_sort(rank.begin(), rank.end(),
                     [&](std::size_t a, std::size_t b) { return entries[a].fraction > entries[b].fraction; });
    for (std::size_t r : rank) {
        if (placed == n || entries[r].fraction < 0) break;
        ++entries[r].count;
        ++placed;
    }

    std::vector<Share> plan;
    std::size_t first = 0;
    for (const Entry& e : entries) {
        plan.push_back({first, e.count});
        first += e.count;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* p = nullptr;
    if (cudaMallocHost(&p, n * sizeof(float)) != cudaSuccess) {
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
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    if (const cudaError_t s = check_plan(plan.size()); s != cudaSuccess) return s;

    CurrentDeviceGuard guard;
    std::vector<Lane> lanes(plan.size());
    cudaError_t status = cudaSuccess;

    // Prepare: a stream, a buffer (and events) per busy device.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        if (plan[d].count == 0) continue;
        Lane& l = lanes[d];
        if ((status = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        l.used = true;
        if ((status = cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking)) != cudaSuccess) break;
        if (device_ms != nullptr) {
            if ((status = cudaEventCreate(&l.start)) != cudaSuccess) break;
            if ((status = cudaEventCreate(&l.stop)) != cudaSuccess) break;
        }
        status = cudaMalloc(&l.buffer, plan[d].count * sizeof(float));
    }

    // Issue: the whole round trip on the stream; nothing here waits.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Lane& l = lanes[d];
        if (!l.used) continue;
        const std::size_t bytes = plan[d].count * sizeof(float);
        if ((status = cudaSetDevice(static_cast<int>(d))) != cudaSuccess) break;
        if (l.start != nullptr && (status = cudaEventRecord(l.start, l.stream)) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(l.buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice, l.stream)) !=
            cudaSuccess)
            break;
        scale_kernel<<<blocks_for(plan[d].count), kThreads, 0, l.stream>>>(l.buffer, plan[d].count, factor);
        if ((status = cudaGetLastError()) != cudaSuccess) break;
        if ((status = cudaMemcpyAsync(out + plan[d].first, l.buffer, bytes, cudaMemcpyDeviceToHost, l.stream)) !=
            cudaSuccess)
            break;
        if (l.stop != nullptr) status = cudaEventRecord(l.stop, l.stream);
    }

    // Wait for every device.
    for (std::size_t d = 0; d < plan.size() && status == cudaSuccess; ++d) {
        Lane& l = lanes[d];
        if (!l.used) continue;
        status = cudaStreamSynchronize(l.stream);
        if (status == cudaSuccess && device_ms != nullptr)
            status = cudaEventElapsedTime(&(*device_ms)[d], l.start, l.stop);
    }

    // Release whatever is left, on every path.
    for (std::size_t d = 0; d < lanes.size(); ++d) {
        Lane& l = lanes[d];
        if (!l.used) continue;
        cudaSetDevice(static_cast<int>(d));
        if (l.stream != nullptr) cudaStreamSynchronize(l.stream);
        if (l.buffer != nullptr) cudaFree(l.buffer);
        if (l.start != nullptr) cudaEventDestroy(l.start);
        if (l.stop != nullptr) cudaEventDestroy(l.stop);
        if (l.stream != nullptr) cudaStreamDestroy(l.stream);
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    if (const cudaError_t s = check_plan(plan.size()); s != cudaSuccess) return s;

    std::vector<std::future<cudaError_t>> results;
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        std::packaged_task<cudaError_t()> task(
            [d, out, in, factor, share = plan[d]] { return run_on_own_thread(static_cast<int>(d), out, in, factor, share); });
        results.push_back(task.get_future());
        threads.emplace_back(std::move(task));
    }
    for (std::thread& t : threads) t.join();
    cudaError_t first = cudaSuccess;
    for (auto& r : results) {
        const cudaError_t s = r.get();
        if (first == cudaSuccess) first = s;
    }
    return first;
}
