// Style: exceptions inside, error codes outside: a THROW_ON_ERROR macro throws a small CudaFailure carrying the
// code, RAII owners release on unwinding, and each public function catches and returns the code; the worker
// threads catch their own exceptions.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <numeric>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct CudaFailure {
    cudaError_t code;
};

#define THROW_ON_ERROR(call)                                    \
    do {                                                        \
        const cudaError_t code_ = (call);                       \
        if (code_ != cudaSuccess) throw CudaFailure{code_};     \
    } while (0)

class CallerDevice {
public:
    CallerDevice() { THROW_ON_ERROR(cudaGetDevice(&device_)); }
    ~CallerDevice() { cudaSetDevice(device_); }
    CallerDevice(const CallerDevice&) = delete;
    CallerDevice& operator=(const CallerDevice&) = delete;

private:
    int device_ = 0;
};

// Everything one device needs; the destructor releases it with that device current.
class DeviceShare {
public:
    DeviceShare(int device, Share share, bool timed) : device_(device), share_(share)
    {
        try {
            THROW_ON_ERROR(cudaSetDevice(device_));
            THROW_ON_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
            THROW_ON_ERROR(cudaMalloc(&buffer_, share_.count * sizeof(float)));
            if (timed) {
                THROW_ON_ERROR(cudaEventCreate(&start_));
                THROW_ON_ERROR(cudaEventCreate(&stop_));
            }
        } catch (...) {
            release();   // a constructor that throws gets no destructor call
            throw;
        }
    }
    ~DeviceShare() { release(); }
    DeviceShare(const DeviceShare&) = delete;
    DeviceShare& operator=(const DeviceShare&) = delete;

    void queue(float* out, const float* in, float factor);
    float wait_and_time()
    {
        THROW_ON_ERROR(cudaStreamSynchronize(stream_));
        float ms = 0;
        if (start_ != nullptr) THROW_ON_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    void release()
    {
        cudaSetDevice(device_);
        if (stream_ != nullptr) cudaStreamSynchronize(stream_);
        if (start_ != nullptr) cudaEventDestroy(start_);
        if (stop_ != nullptr) cudaEventDestroy(stop_);
        if (buffer_ != nullptr) cudaFree(buffer_);
        if (stream_ != nullptr) cudaStreamDestroy(stream_);
        stream_ = nullptr;
        buffer_ = nullptr;
        start_ = stop_ = nullptr;
    }

    int device_;
    Share share_;
    cudaStream_t stream_ = nullptr;
    float* buffer_ = nullptr;
    cudaEvent_t start_ = nullptr;
    cudaEvent_t stop_ = nullptr;
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
    return b == 0 ? 1u : b > kMaxBlocks ? kMaxBlocks : static_cast<unsigned>(b);
}

void DeviceShare::queue(float* out, const float* in, float factor)
{
    const std::size_t bytes = share_.count * sizeof(float);
    THROW_ON_ERROR(cudaSetDevice(device_));
    if (start_ != nullptr) THROW_ON_ERROR(cudaEventRecord(start_, stream_));
    THROW_ON_ERROR(cudaMemcpyAsync(buffer_, in + share_.first, bytes, cudaMemcpyHostToDevice, stream_));
    scale_kernel<<<blocks_for(share_.count), kThreads, 0, stream_>>>(buffer_, share_.count, factor);
    THROW_ON_ERROR(cudaGetLastError());
    THROW_ON_ERROR(cudaMemcpyAsync(out + share_.first, buffer_, bytes, cudaMemcpyDeviceToHost, stream_));
    if (stop_ != nullptr) THROW_ON_ERROR(cudaEventRecord(stop_, stream_));
}

void require_devices_for(std::size_t shares)
{
    int devices = 0;
    THROW_ON_ERROR(cudaGetDeviceCount(&devices));
    if (shares > static_cast<std::size_t>(devices)) throw CudaFailure{cudaErrorInvalidValue};
}

void one_thread_share(int device, float* out, const float* in, float factor, Share share)
{
    THROW_ON_ERROR(cudaSetDevice(device));
    float* buffer = nullptr;
    THROW_ON_ERROR(cudaMalloc(&buffer, share.count * sizeof(float)));
    cudaError_t status = cudaMemcpy(buffer, in + share.first, share.count * sizeof(float), cudaMemcpyHostToDevice);
    if (status == cudaSuccess) {
        scale_kernel<<<blocks_for(share.count), kThreads>>>(buffer, share.count, factor);
        status = cudaGetLastError();
    }
    if (status == cudaSuccess)
        status = cudaMemcpy(out + share.first, buffer, share.count * sizeof(float), cudaMemcpyDeviceToHost);
    const cudaError_t freed = cudaFree(buffer);
    THROW_ON_ERROR(status);
    THROW_ON_ERROR(freed);
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t p = static_cast<std::size_t>(parts);
    for (std::size_t i = 0, first = 0; i < p; ++i) {
        const std::size_t count = n / p + (i < n % p ? 1 : 0);
        plan.push_back(Share{first, count});
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

    std::vector<std::size_t> counts;
    std::vector<std::pair<double, std::size_t>> remainders;   // (-fraction, index): sorts largest first
    std::size_t sum = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        const double whole = std::floor(ideal);
        counts.push_back(std::min(n, static_cast<std::size_t>(whole)));
        sum += counts.back();
        if (weights[i] > 0) remainders.emplace_back(-(ideal - whole), i);
    }
    std::sort(remainders.begin(), remainders.end());
    for (const auto& r : remainders) {
        if (sum >= n) break;
        ++counts[r.second];
        ++sum;
    }

    std::vector<Share> plan;
    std::size_t first = 0;
    for (std::size_t c : counts) {
        plan.push_back(Share{first, c});
        first += c;
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
    try {
        require_devices_for(plan.size());
        CallerDevice caller;                               // unwound last
        std::vector<std::unique_ptr<DeviceShare>> shares(plan.size());
        for (std::size_t d = 0; d < plan.size(); ++d)
            if (plan[d].count > 0)
                shares[d] = std::make_unique<DeviceShare>(static_cast<int>(d), plan[d], device_ms != nullptr);
        for (const auto& s : shares)
            if (s) s->queue(out, in, factor);
        for (std::size_t d = 0; d < plan.size(); ++d) {
            if (!shares[d]) continue;
            const float ms = shares[d]->wait_and_time();
            if (device_ms != nullptr) (*device_ms)[d] = ms;
        }
        return cudaSuccess;
    } catch (const CudaFailure& failure) {
        return failure.code;
    } catch (const std::bad_alloc&) {
        return cudaErrorMemoryAllocation;
    }
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    try {
        require_devices_for(plan.size());
    } catch (const CudaFailure& failure) {
        return failure.code;
    }

    std::vector<cudaError_t> results(plan.size(), cudaSuccess);
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        threads.emplace_back([&results, d, out, in, factor, share = plan[d]] {
            try {
                one_thread_share(static_cast<int>(d), out, in, factor, share);
            } catch (const CudaFailure& failure) {
                results[d] = failure.code;   // an exception must not leave a thread
            }
        });
    }
    for (std::thread& t : threads) t.join();
    for (cudaError_t r : results)
        if (r != cudaSuccess) return r;
    return cudaSuccess;
}
