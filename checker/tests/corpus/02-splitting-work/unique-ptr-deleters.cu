// Style: std::unique_ptr with custom deleters that remember their device; weighted shares from the floors of
// the running ideal sums; worker threads on cudaStreamPerThread with cudaMemcpyDefault; portable pinned memory.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

using StreamObject = std::remove_pointer_t<cudaStream_t>;
using EventObject = std::remove_pointer_t<cudaEvent_t>;

// Every deleter makes its device current first: things are released where they were made.
struct BufferDeleter {
    int device;
    void operator()(float* p) const
    {
        cudaSetDevice(device);
        cudaFree(p);
    }
};
struct StreamDeleter {
    int device;
    void operator()(cudaStream_t s) const
    {
        cudaSetDevice(device);
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
    }
};
struct EventDeleter {
    int device;
    void operator()(cudaEvent_t e) const
    {
        cudaSetDevice(device);
        cudaEventDestroy(e);
    }
};
using BufferPtr = std::unique_ptr<float, BufferDeleter>;
using StreamPtr = std::unique_ptr<StreamObject, StreamDeleter>;
using EventPtr = std::unique_ptr<EventObject, EventDeleter>;

struct CallerDevice {
    int device = -1;
    CallerDevice()
    {
        if (cudaGetDevice(&device) != cudaSuccess) {
            device = -1;
            cudaGetLastError();
        }
    }
    ~CallerDevice()
    {
        if (device >= 0) cudaSetDevice(device);
    }
    CallerDevice(const CallerDevice&) = delete;
    CallerDevice& operator=(const CallerDevice&) = delete;
};

// Declared in this order so that the stream (which waits for its work) goes first, the buffer last.
struct Work {
    BufferPtr buffer{nullptr, BufferDeleter{-1}};
    EventPtr start{nullptr, EventDeleter{-1}};
    EventPtr stop{nullptr, EventDeleter{-1}};
    StreamPtr stream{nullptr, StreamDeleter{-1}};
};

constexpr unsigned kThreads = 256;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned blocks(std::size_t n)
{
    return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 65535));
}

cudaError_t shares_fit(std::size_t shares)
{
    int devices = 0;
    const cudaError_t s = cudaGetDeviceCount(&devices);
    if (s != cudaSuccess) return s;
    return shares <= static_cast<std::size_t>(devices) ? cudaSuccess : cudaErrorInvalidValue;
}

#define OK_OR_RETURN(x)                          \
    do {                                         \
        const cudaError_t s_ = (x);              \
        if (s_ != cudaSuccess) return s_;        \
    } while (0)

cudaError_t prepare(Work& w, int device, std::size_t count, bool timed)
{
    OK_OR_RETURN(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    OK_OR_RETURN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    w.stream = StreamPtr(stream, StreamDeleter{device});
    float* buffer = nullptr;
    OK_OR_RETURN(cudaMalloc(&buffer, count * sizeof(float)));
    w.buffer = BufferPtr(buffer, BufferDeleter{device});
    if (timed) {
        cudaEvent_t e = nullptr;
        OK_OR_RETURN(cudaEventCreate(&e));
        w.start = EventPtr(e, EventDeleter{device});
        OK_OR_RETURN(cudaEventCreate(&e));
        w.stop = EventPtr(e, EventDeleter{device});
    }
    return cudaSuccess;
}

cudaError_t issue(Work& w, int device, float* out, const float* in, float factor, Share share)
{
    const std::size_t bytes = share.count * sizeof(float);
    OK_OR_RETURN(cudaSetDevice(device));
    if (w.start) OK_OR_RETURN(cudaEventRecord(w.start.get(), w.stream.get()));
    OK_OR_RETURN(cudaMemcpyAsync(w.buffer.get(), in + share.first, bytes, cudaMemcpyHostToDevice, w.stream.get()));
    scale_kernel<<<blocks(share.count), kThreads, 0, w.stream.get()>>>(w.buffer.get(), share.count, factor);
    OK_OR_RETURN(cudaGetLastError());
    OK_OR_RETURN(cudaMemcpyAsync(out + share.first, w.buffer.get(), bytes, cudaMemcpyDeviceToHost, w.stream.get()));
    if (w.stop) OK_OR_RETURN(cudaEventRecord(w.stop.get(), w.stream.get()));
    return cudaSuccess;
}

cudaError_t one_share(int device, float* out, const float* in, float factor, Share share)
{
    OK_OR_RETURN(cudaSetDevice(device));
    float* raw = nullptr;
    OK_OR_RETURN(cudaMalloc(&raw, share.count * sizeof(float)));
    BufferPtr buffer(raw, BufferDeleter{device});
    const std::size_t bytes = share.count * sizeof(float);
    OK_OR_RETURN(cudaMemcpyAsync(buffer.get(), in + share.first, bytes, cudaMemcpyDefault, cudaStreamPerThread));
    scale_kernel<<<blocks(share.count), kThreads, 0, cudaStreamPerThread>>>(buffer.get(), share.count, factor);
    OK_OR_RETURN(cudaGetLastError());
    OK_OR_RETURN(cudaMemcpyAsync(out + share.first, buffer.get(), bytes, cudaMemcpyDefault, cudaStreamPerThread));
    return cudaStreamSynchronize(cudaStreamPerThread);
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts < 1) return {};
    const std::size_t p = static_cast<std::size_t>(parts);
    std::vector<Share> plan;
    plan.reserve(p);
    std::size_t first = 0;
    for (std::size_t i = 0; i < p; ++i) {
        std::size_t count = n / p;
        if (i < n % p) ++count;
        plan.emplace_back(Share{first, count});
        first += count;
    }
    return plan;
}

// Share i runs from floor(S_i) to floor(S_{i+1}), S_i being the sum of the ideals before it: its count is
// within one of its ideal, the last boundary is n, and a weight of 0 repeats a boundary (an empty share).
std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    double total = 0;
    for (double w : weights) {
        if (!(w >= 0)) return {};
        total += w;
    }
    if (!(total > 0)) return {};

    std::vector<Share> plan;
    plan.reserve(weights.size());
    double running = 0;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        running += weights[i];
        std::size_t end = begin;
        if (weights[i] > 0) {
            const double at = std::floor(static_cast<double>(n) * (running / total));
            end = running >= total ? n : std::min(n, std::max(begin, static_cast<std::size_t>(at)));
        }
        plan.push_back(Share{begin, end - begin});
        begin = end;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* p = nullptr;
    if (cudaHostAlloc(&p, n * sizeof(float), cudaHostAllocPortable) != cudaSuccess) {
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
    OK_OR_RETURN(shares_fit(plan.size()));

    CallerDevice caller;              // outlives the work below: the caller's device comes back last
    std::vector<Work> work(plan.size());
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) OK_OR_RETURN(prepare(work[d], static_cast<int>(d), plan[d].count, device_ms != nullptr));
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) OK_OR_RETURN(issue(work[d], static_cast<int>(d), out, in, factor, plan[d]));
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        OK_OR_RETURN(cudaStreamSynchronize(work[d].stream.get()));
        if (device_ms != nullptr)
            OK_OR_RETURN(cudaEventElapsedTime(&(*device_ms)[d], work[d].start.get(), work[d].stop.get()));
    }
    return cudaSuccess;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    OK_OR_RETURN(shares_fit(plan.size()));
    std::vector<cudaError_t> result(plan.size(), cudaSuccess);
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0)
            threads.emplace_back([&result, d, out, in, factor, share = plan[d]] {
                result[d] = one_share(static_cast<int>(d), out, in, factor, share);
            });
    for (std::thread& t : threads) t.join();
    const auto failed = std::find_if(result.begin(), result.end(), [](cudaError_t e) { return e != cudaSuccess; });
    return failed == result.end() ? cudaSuccess : *failed;
}
