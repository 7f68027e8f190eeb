// I copy each result back with a plain cudaMemcpy in the issue loop; the copy in and kernel are already async.
#include "split_work.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <thread>
#include <vector>

// Records the failing call's code in `status` and leaves through the cleanup label.
#define CHECK(call)                           \
    do {                                      \
        status = (call);                      \
        if (status != cudaSuccess) goto cleanup; \
    } while (0)

namespace {

const unsigned kThreadsPerBlock = 256;
const unsigned kMaxBlocks = 4096;

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

unsigned blocks_for(std::size_t n)
{
    std::size_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
    if (blocks < 1) blocks = 1;
    if (blocks > kMaxBlocks) blocks = kMaxBlocks;
    return static_cast<unsigned>(blocks);
}

cudaError_t count_devices(int* devices)
{
    *devices = 0;
    return cudaGetDeviceCount(devices);
}

cudaError_t thread_body(int device, float* out, const float* in, float factor, Share share)
{
    cudaError_t status = cudaSuccess;
    float* buffer = nullptr;
    cudaError_t freed = cudaSuccess;
    const std::size_t bytes = share.count * sizeof(float);

    CHECK(cudaSetDevice(device));
    CHECK(cudaMalloc(&buffer, bytes));
    CHECK(cudaMemcpy(buffer, in + share.first, bytes, cudaMemcpyHostToDevice));
    scale_kernel<<<blocks_for(share.count), kThreadsPerBlock>>>(buffer, share.count, factor);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out + share.first, buffer, bytes, cudaMemcpyDeviceToHost));

cleanup:
    if (buffer != nullptr) {
        freed = cudaFree(buffer);
        if (status == cudaSuccess) status = freed;
    }
    return status;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    if (parts <= 0) return std::vector<Share>();
    const std::size_t p = static_cast<std::size_t>(parts);
    const std::size_t base = n / p;
    const std::size_t extra = n % p;
    std::vector<Share> plan(p);
    for (std::size_t i = 0; i < p; ++i) {
        plan[i].first = i * base + std::min(i, extra);
        plan[i].count = base + (i < extra ? 1 : 0);
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    const std::size_t k = weights.size();
    if (k == 0) return std::vector<Share>();
    double total = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
        if (weights[i] < 0.0 || weights[i] != weights[i]) return std::vector<Share>();
        total += weights[i];
    }
    if (total <= 0.0) return std::vector<Share>();

    std::vector<std::size_t> count(k, 0);
    std::vector<double> fraction(k, 0.0);
    std::size_t given = 0;
    for (std::size_t i = 0; i < k; ++i) {
        const double ideal = static_cast<double>(n) * weights[i] / total;
        std::size_t whole = static_cast<std::size_t>(ideal);
        if (whole > n) whole = n;
        count[i] = whole;
        fraction[i] = ideal - static_cast<double>(whole);
        given += whole;
    }

    std::vector<std::size_t> order(k);
    for (std::size_t i = 0; i < k; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (fraction[a] != fraction[b]) return fraction[a] > fraction[b];
        return a < b;
    });
    for (std::size_t j = 0; j < k && given < n; ++j) {
        const std::size_t i = order[j];
        if (weights[i] == 0.0) continue;   // a 0 weight never gets a left-over element
        ++count[i];
        ++given;
    }

    std::vector<Share> plan(k);
    std::size_t first = 0;
    for (std::size_t i = 0; i < k; ++i) {
        plan[i].first = first;
        plan[i].count = count[i];
        first += count[i];
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    float* buffer = nullptr;
    if (n == 0) return nullptr;
    if (cudaMallocHost(reinterpret_cast<void**>(&buffer), n * sizeof(float)) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return buffer;
}

void free_host_buffer(float* buffer)
{
    if (buffer == nullptr) return;
    (void)cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    cudaError_t status = cudaSuccess;
    const std::size_t parts = plan.size();
    int devices = 0;
    int caller = -1;
    bool timed = device_ms != nullptr;
    std::vector<cudaStream_t> streams(parts, nullptr);
    std::vector<float*> buffers(parts, nullptr);
    std::vector<cudaEvent_t> before(parts, nullptr);
    std::vector<cudaEvent_t> after(parts, nullptr);

    if (timed) device_ms->assign(parts, 0.0f);
    status = count_devices(&devices);
    if (status != cudaSuccess) return status;
    if (parts > static_cast<std::size_t>(devices)) return cudaErrorInvalidValue;
    status = cudaGetDevice(&caller);
    if (status != cudaSuccess) return status;

    for (std::size_t d = 0; d < parts; ++d) {
        if (plan[d].count == 0) continue;
        CHECK(cudaSetDevice(static_cast<int>(d)));
        CHECK(cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking));
        CHECK(cudaMalloc(&buffers[d], plan[d].count * sizeof(float)));
        if (timed) {
            CHECK(cudaEventCreate(&before[d]));
            CHECK(cudaEventCreate(&after[d]));
        }
    }

    for (std::size_t d = 0; d < parts; ++d) {
        if (plan[d].count == 0) continue;
        CHECK(cudaSetDevice(static_cast<int>(d)));
        if (timed) CHECK(cudaEventRecord(before[d], streams[d]));
        CHECK(cudaMemcpyAsync(buffers[d], in + plan[d].first, plan[d].count * sizeof(float), cudaMemcpyHostToDevice,
                              streams[d]));
        scale_kernel<<<blocks_for(plan[d].count), kThreadsPerBlock, 0, streams[d]>>>(buffers[d], plan[d].count,
                                                                                      factor);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(out + plan[d].first, buffers[d], plan[d].count * sizeof(float), cudaMemcpyDeviceToHost));
        if (timed) CHECK(cudaEventRecord(after[d], streams[d]));
    }

    for (std::size_t d = 0; d < parts; ++d) {
        if (plan[d].count == 0) continue;
        CHECK(cudaStreamSynchronize(streams[d]));
    }
    if (timed) {
        for (std::size_t d = 0; d < parts; ++d) {
            if (plan[d].count == 0) continue;
            CHECK(cudaEventElapsedTime(&(*device_ms)[d], before[d], after[d]));
        }
    }

cleanup:
    for (std::size_t d = 0; d < parts; ++d) {
        if (streams[d] == nullptr && buffers[d] == nullptr && before[d] == nullptr && after[d] == nullptr) continue;
        cudaSetDevice(static_cast<int>(d));
        if (streams[d] != nullptr) cudaStreamSynchronize(streams[d]);
        if (before[d] != nullptr) cudaEventDestroy(before[d]);
        if (after[d] != nullptr) cudaEventDestroy(after[d]);
        if (buffers[d] != nullptr) cudaFree(buffers[d]);
        if (streams[d] != nullptr) cudaStreamDestroy(streams[d]);
    }
    if (caller >= 0) {
        const cudaError_t restored = cudaSetDevice(caller);
        if (status == cudaSuccess) status = restored;
    }
    return status;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    int devices = 0;
    const cudaError_t counted = count_devices(&devices);
    if (counted != cudaSuccess) return counted;
    if (plan.size() > static_cast<std::size_t>(devices)) return cudaErrorInvalidValue;

    std::vector<cudaError_t> results(plan.size(), cudaSuccess);
    std::vector<std::thread> threads;
    threads.reserve(plan.size());
    for (std::size_t d = 0; d < plan.size(); ++d) {
        if (plan[d].count == 0) continue;
        const Share share = plan[d];
        threads.emplace_back([&results, d, out, in, factor, share] {
            results[d] = thread_body(static_cast<int>(d), out, in, factor, share);
        });
    }
    for (std::size_t t = 0; t < threads.size(); ++t) threads[t].join();
    for (std::size_t d = 0; d < results.size(); ++d)
        if (results[d] != cudaSuccess) return results[d];
    return cudaSuccess;
}
