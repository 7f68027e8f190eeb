// Style: early argument checks (null buffers with work to do, too many shares); offsets by std::exclusive_scan;
// the host polls every stream with cudaStreamQuery until all are done; threads held at a std::latch so they
// start their work together.
#include "split_work.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <latch>
#include <numeric>
#include <thread>
#include <vector>

namespace {

constexpr unsigned kBlock = 256;

// One thread per element.
__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}

unsigned grid_for(std::size_t n)
{
    return static_cast<unsigned>((n + kBlock - 1) / kBlock);
}

// cudaSuccess when the call may go ahead; otherwise the error the header asks for.
cudaError_t validate(float* out, const float* in, const std::vector<Share>& plan)
{
    int devices = 0;
    const cudaError_t counted = cudaGetDeviceCount(&devices);
    if (counted != cudaSuccess) return counted;
    if (plan.size() > static_cast<std::size_t>(devices)) return cudaErrorInvalidValue;
    const bool work = std::any_of(plan.begin(), plan.end(), [](const Share& s) { return s.count > 0; });
    if (work && (out == nullptr || in == nullptr)) return cudaErrorInvalidValue;
    return cudaSuccess;
}

struct Slot {
    int device = -1;
    Share share;
    cudaStream_t stream = nullptr;
    float* buffer = nullptr;
    cudaEvent_t t0 = nullptr;
    cudaEvent_t t1 = nullptr;
    bool done = false;
};

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return {};
    const std::size_t p = static_cast<std::size_t>(parts);
    std::vector<std::size_t> counts(p, n / p);
    for (std::size_t i = 0; i < n % p; ++i) ++counts[i];   // the remainder, one each to the first shares
    std::vector<std::size_t> firsts(p);
    std::exclusive_scan(counts.begin(), counts.end(), firsts.begin(), std::size_t{0});
    std::vector<Share> plan(p);
    for (std::size_t i = 0; i < p; ++i) plan[i] = Share{firsts[i], counts[i]};
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    if (weights.empty()) return {};
    if (std::any_of(weights.begin(), weights.end(), [](double w) { return !(w >= 0); })) return {};
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(total > 0)) return {};

    const std::size_t k = weights.size();
    std::vector<std::size_t> counts(k);
    std::vector<double> frac(k);
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        const double whole = std::floor(ideal);
        counts[i] = std::min(n, static_cast<std::size_t>(whole));
        frac[i] = weights[i] == 0 ? -1 : ideal - whole;
    }
    std::size_t missing = n - std::min(n, std::accumulate(counts.begin(), counts.end(), std::size_t{0}));
    std::vector<std::size_t> order(k);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return frac[a] > frac[b] || (frac[a] == frac[b] && a < b);
    });
    for (std::size_t i : order) {
        if (missing == 0 || frac[i] < 0) break;
        ++counts[i];
        --missing;
    }

    std::vector<std::size_t> firsts(k);
    std::exclusive_scan(counts.begin(), counts.end(), firsts.begin(), std::size_t{0});
    std::vector<Share> plan(k);
    for (std::size_t i = 0; i < k; ++i) plan[i] = Share{firsts[i], counts[i]};
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* buffer = nullptr;
    const cudaError_t status = cudaMallocHost(&buffer, n * sizeof(float));
    if (status == cudaSuccess) return buffer;
    cudaGetLastError();
    return nullptr;
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    cudaError_t status = validate(out, in, plan);
    if (status != cudaSuccess) return status;

    int caller = 0;
    if ((status = cudaGetDevice(&caller)) != cudaSuccess) return status;

    std::vector<Slot> slots;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) slots.push_back(Slot{static_cast<int>(d), plan[d]});

    for (Slot& s : slots) {
        if ((status = cudaSetDevice(s.device)) != cudaSuccess) break;
        if ((status = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking)) != cudaSuccess) break;
        if ((status = cudaMalloc(&s.buffer, s.share.count * sizeof(float))) != cudaSuccess) break;
        if (device_ms != nullptr) {
            if ((status = cudaEventCreate(&s.t0)) != cudaSuccess) break;
            if ((status = cudaEventCreate(&s.t1)) != cudaSuccess) break;
        }
    }
    for (Slot& s : slots) {
        if (status != cudaSuccess) break;
        const std::size_t bytes = s.share.count * sizeof(float);
        if ((status = cudaSetDevice(s.device)) != cudaSuccess) break;
        if (s.t0 != nullptr && (status = cudaEventRecord(s.t0, s.stream)) != cudaSuccess) break;
        status = cudaMemcpyAsync(s.buffer, in + s.share.first, bytes, cudaMemcpyHostToDevice, s.stream);
        if (status != cudaSuccess) break;
        scale_kernel<<<grid_for(s.share.count), kBlock, 0, s.stream>>>(s.buffer, s.share.count, factor);
        if ((status = cudaGetLastError()) != cudaSuccess) break;
        status = cudaMemcpyAsync(out + s.share.first, s.buffer, bytes, cudaMemcpyDeviceToHost, s.stream);
        if (status != cudaSuccess) break;
        if (s.t1 != nullptr && (status = cudaEventRecord(s.t1, s.stream)) != cudaSuccess) break;
    }

    // Poll every stream until all are done; cudaErrorNotReady only means "still working".
    std::size_t left = status == cudaSuccess ? slots.size() : 0;
    while (left > 0 && status == cudaSuccess) {
        for (Slot& s : slots) {
            if (s.done) continue;
            const cudaError_t q = cudaStreamQuery(s.stream);
            if (q == cudaErrorNotReady) continue;
            if (q != cudaSuccess) {
                status = q;
                break;
            }
            s.done = true;
            --left;
            if (device_ms != nullptr) {
                const std::size_t d = static_cast<std::size_t>(s.device);
                if ((status = cudaEventElapsedTime(&(*device_ms)[d], s.t0, s.t1)) != cudaSuccess) break;
            }
        }
        if (left > 0) std::this_thread::yield();
    }

    for (Slot& s : slots) {
        if (s.stream == nullptr && s.buffer == nullptr) continue;
        cudaSetDevice(s.device);
        if (s.stream != nullptr) cudaStreamSynchronize(s.stream);
        if (s.t0 != nullptr) cudaEventDestroy(s.t0);
        if (s.t1 != nullptr) cudaEventDestroy(s.t1);
        if (s.buffer != nullptr) cudaFree(s.buffer);
        if (s.stream != nullptr) cudaStreamDestroy(s.stream);
    }
    const cudaError_t restored = cudaSetDevice(caller);
    return status != cudaSuccess ? status : restored;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    const cudaError_t checked = validate(out, in, plan);
    if (checked != cudaSuccess) return checked;

    std::vector<std::size_t> busy;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) busy.push_back(d);

    std::vector<cudaError_t> status(plan.size(), cudaSuccess);
    std::latch ready(static_cast<std::ptrdiff_t>(busy.size()));
    std::vector<std::thread> threads;
    threads.reserve(busy.size());
    for (std::size_t d : busy) {
        threads.emplace_back([&, d] {
            ready.arrive_and_wait();   // every thread exists before any starts copying
            const Share share = plan[d];
            const std::size_t bytes = share.count * sizeof(float);
            cudaError_t s = cudaSetDevice(static_cast<int>(d));
            float* buffer = nullptr;
            if (s == cudaSuccess) s = cudaMalloc(&buffer, bytes);
            if (s == cudaSuccess) s = cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice);
            if (s == cudaSuccess) {
                scale_kernel<<<grid_for(share.count), kBlock>>>(buffer, share.count, factor);
                s = cudaGetLastError();
            }
            if (s == cudaSuccess) s = cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost);
            if (buffer != nullptr) {
                const cudaError_t f = cudaFree(buffer);
                if (s == cudaSuccess) s = f;
            }
            status[d] = s;
        });
    }
    for (std::thread& t : threads) t.join();
    for (cudaError_t s : status)
        if (s != cudaSuccess) return s;
    return cudaSuccess;
}
