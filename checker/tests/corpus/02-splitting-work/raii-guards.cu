// Style: RAII owners for the current device, streams, device buffers and events, each releasing itself with
// its own device current; worker threads with a stream of their own and a joining guard.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

namespace {

// Gives the caller's current device back when the scope ends.
class DeviceScope {
public:
    DeviceScope()
    {
        if (cudaGetDevice(&saved_) != cudaSuccess) {
            saved_ = -1;
            cudaGetLastError();
        }
    }
    ~DeviceScope()
    {
        if (saved_ >= 0) cudaSetDevice(saved_);
    }
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int saved_ = -1;
};

class Stream {
public:
    Stream() = default;
    cudaError_t create(int device)
    {
        device_ = device;
        return cudaStreamCreateWithFlags(&handle_, cudaStreamNonBlocking);
    }
    Stream(Stream&& other) noexcept : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}
    Stream& operator=(Stream&&) = delete;
    Stream(const Stream&) = delete;
    ~Stream()
    {
        if (handle_ == nullptr) return;
        cudaSetDevice(device_);
        cudaStreamSynchronize(handle_);   // never destroy a stream under queued work
        cudaStreamDestroy(handle_);
    }
    cudaStream_t get() const { return handle_; }

private:
    int device_ = -1;
    cudaStream_t handle_ = nullptr;
};

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    cudaError_t allocate(int device, std::size_t count)
    {
        device_ = device;
        return cudaMalloc(&data_, count * sizeof(float));
    }
    DeviceBuffer(DeviceBuffer&& other) noexcept : device_(other.device_), data_(std::exchange(other.data_, nullptr)) {}
    DeviceBuffer& operator=(DeviceBuffer&&) = delete;
    DeviceBuffer(const DeviceBuffer&) = delete;
    ~DeviceBuffer()
    {
        if (data_ == nullptr) return;
        cudaSetDevice(device_);
        cudaFree(data_);
    }
    float* get() const { return data_; }

private:
    int device_ = -1;
    float* data_ = nullptr;
};

class Event {
public:
    Event() = default;
    cudaError_t create(int device)
    {
        device_ = device;
        return cudaEventCreate(&handle_);
    }
    Event(Event&& other) noexcept : device_(other.device_), handle_(std::exchange(other.handle_, nullptr)) {}
    Event& operator=(Event&&) = delete;
    Event(const Event&) = delete;
    ~Event()
    {
        if (handle_ == nullptr) return;
        cudaSetDevice(device_);
        cudaEventDestroy(handle_);
    }
    cudaEvent_t get() const { return handle_; }

private:
    int device_ = -1;
    cudaEvent_t handle_ = nullptr;
};

// Members are destroyed in reverse order: the stream first, which waits for its work, then the events and
// the buffer.
struct DeviceJob {
    DeviceBuffer buffer;
    Event started;
    Event finished;
    Stream stream;
};

class JoinAll {
public:
    explicit JoinAll(std::vector<std::thread>& threads) : threads_(threads) {}
    ~JoinAll()
    {
        for (std::thread& t : threads_)
            if (t.joinable()) t.join();
    }
    JoinAll(const JoinAll&) = delete;
    JoinAll& operator=(const JoinAll&) = delete;

private:
    std::vector<std::thread>& threads_;
};

constexpr unsigned kThreads = 128;
constexpr unsigned kBlocksCap = 32768;

unsigned blocks_for(std::size_t n)
{
    const std::size_t blocks = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, kBlocksCap));
}

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<std::size_t>(blockDim.x) * gridDim.x)
        data[i] *= factor;
}

cudaError_t check_plan(std::size_t shares)
{
    int devices = 0;
    if (const cudaError_t status = cudaGetDeviceCount(&devices); status != cudaSuccess) return status;
    return shares > static_cast<std::size_t>(devices) ? cudaErrorInvalidValue : cudaSuccess;
}

#define TRY(expr)                                          \
    do {                                                   \
        if (const cudaError_t e_ = (expr); e_ != cudaSuccess) \
            return e_;                                     \
    } while (0)

cudaError_t worker(int device, float* out, const float* in, float factor, Share share)
{
    TRY(cudaSetDevice(device));
    DeviceBuffer buffer;   // declared before the stream, so freed after the stream has waited
    Stream stream;
    TRY(stream.create(device));
    TRY(buffer.allocate(device, share.count));
    const std::size_t bytes = share.count * sizeof(float);
    TRY(cudaMemcpyAsync(buffer.get(), in + share.first, bytes, cudaMemcpyHostToDevice, stream.get()));
    scale_kernel<<<blocks_for(share.count), kThreads, 0, stream.get()>>>(buffer.get(), share.count, factor);
    TRY(cudaGetLastError());
    TRY(cudaMemcpyAsync(out + share.first, buffer.get(), bytes, cudaMemcpyDeviceToHost, stream.get()));
    TRY(cudaStreamSynchronize(stream.get()));
    return cudaSuccess;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const auto p = static_cast<std::size_t>(parts);
    plan.reserve(p);
    std::size_t next = 0;
    for (std::size_t i = 0; i < p; ++i) {
        const std::size_t count = n / p + (i < n % p ? 1 : 0);
        plan.push_back({next, count});
        next += count;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    if (std::any_of(weights.begin(), weights.end(), [](double w) { return std::isnan(w) || w < 0; })) return {};
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(total > 0)) return {};

    struct Part {
        std::size_t index;
        std::size_t count;
        double fraction;
    };
    std::vector<Part> parts;
    std::size_t given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double ideal = static_cast<double>(n) * (weights[i] / total);
        const double whole = std::floor(ideal);
        const std::size_t count = std::min(n, static_cast<std::size_t>(whole));
        parts.push_back({i, count, weights[i] > 0 ? ideal - whole : -1.0});
        given += count;
    }
    std::vector<Part> ranked = parts;
    std::stable_sort(ranked.begin(), ranked.end(), [](const Part& a, const Part& b) { return a.fraction > b.fraction; });
    for (const Part& r : ranked) {
        if (given >= n || r.fraction < 0) break;
        ++parts[r.index].count;
        ++given;
    }

    std::vector<Share> plan;
    std::size_t first = 0;
    for (const Part& part : parts) {
        plan.push_back({first, part.count});
        first += part.count;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* pinned = nullptr;
    if (cudaMallocHost(&pinned, n * sizeof(float)) == cudaSuccess) return pinned;
    cudaGetLastError();
    return nullptr;
}

void free_host_buffer(float* buffer)
{
    if (buffer) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms) device_ms->assign(plan.size(), 0.0f);
    TRY(check_plan(plan.size()));

    DeviceScope scope;                     // destroyed last: the caller's device comes back after all releases
    std::vector<DeviceJob> jobs(plan.size());
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        const int device = static_cast<int>(d);
        TRY(cudaSetDevice(device));
        TRY(jobs[d].stream.create(device));
        TRY(jobs[d].buffer.allocate(device, plan[d].count));
        if (device_ms) {
            TRY(jobs[d].started.create(device));
            TRY(jobs[d].finished.create(device));
        }
    }
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        DeviceJob& job = jobs[d];
        const std::size_t bytes = plan[d].count * sizeof(float);
        TRY(cudaSetDevice(static_cast<int>(d)));
        if (device_ms) TRY(cudaEventRecord(job.started.get(), job.stream.get()));
        TRY(cudaMemcpyAsync(job.buffer.get(), in + plan[d].first, bytes, cudaMemcpyHostToDevice, job.stream.get()));
        scale_kernel<<<blocks_for(plan[d].count), kThreads, 0, job.stream.get()>>>(job.buffer.get(), plan[d].count,
                                                                                    factor);
        TRY(cudaGetLastError());
        TRY(cudaMemcpyAsync(out + plan[d].first, job.buffer.get(), bytes, cudaMemcpyDeviceToHost, job.stream.get()));
        if (device_ms) TRY(cudaEventRecord(job.finished.get(), job.stream.get()));
    }
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        TRY(cudaStreamSynchronize(jobs[d].stream.get()));
        if (device_ms) TRY(cudaEventElapsedTime(&(*device_ms)[d], jobs[d].started.get(), jobs[d].finished.get()));
    }
    return cudaSuccess;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    TRY(check_plan(plan.size()));
    std::vector<cudaError_t> results(plan.size(), cudaSuccess);
    {
        std::vector<std::thread> threads;
        JoinAll join(threads);
        for (std::size_t d = 0; d < plan.size(); ++d) {
            if (plan[d].count == 0) continue;
            threads.emplace_back([&results, d, out, in, factor, share = plan[d]] {
                results[d] = worker(static_cast<int>(d), out, in, factor, share);
            });
        }
    }
    for (cudaError_t r : results)
        if (r != cudaSuccess) return r;
    return cudaSuccess;
}
