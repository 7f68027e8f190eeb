// Style: a first-timer's straight-line code: the skeleton's guard and macro, raw arrays from new[]/delete[]
// for the per-device handles, everything inline in each function, a plain one-thread-per-element kernel.
#include "split_work.h"

#include <algorithm>
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

__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
    if (i < n) data[i] = data[i] * factor;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    std::size_t p = parts;
    std::size_t leftover = n % p;
    std::size_t position = 0;
    for (std::size_t i = 0; i < p; i++) {
        Share s;
        s.first = position;
        s.count = n / p;
        if (leftover > 0) {   // the first n % parts shares take one more each
            s.count++;
            leftover--;
        }
        position += s.count;
        plan.push_back(s);
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    std::vector<Share> plan;
    if (weights.size() == 0) return plan;
    double sum = 0;
    for (std::size_t i = 0; i < weights.size(); i++) {
        if (weights[i] < 0 || weights[i] != weights[i]) return plan;
        sum += weights[i];
    }
    if (sum <= 0) return plan;

    std::size_t k = weights.size();
    std::size_t* counts = new std::size_t[k];
    double* left = new double[k];
    bool* got_extra = new bool[k];
    std::size_t total = 0;
    for (std::size_t i = 0; i < k; i++) {
        double ideal = n * weights[i] / sum;
        counts[i] = (std::size_t)ideal;   // rounds down: ideal >= 0
        if (counts[i] > n) counts[i] = n;
        left[i] = ideal - (double)counts[i];
        got_extra[i] = false;
        total += counts[i];
    }
    // The largest remainder method: one more for each of the largest fractions until the total is n.
    while (total < n) {
        std::size_t best = k;
        for (std::size_t i = 0; i < k; i++) {
            if (weights[i] == 0 || got_extra[i]) continue;
            if (best == k || left[i] > left[best]) best = i;
        }
        if (best == k) break;
        counts[best]++;
        got_extra[best] = true;
        total++;
    }
    std::size_t position = 0;
    for (std::size_t i = 0; i < k; i++) {
        Share s;
        s.first = position;
        s.count = counts[i];
        plan.push_back(s);
        position += counts[i];
    }
    delete[] counts;
    delete[] left;
    delete[] got_extra;
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    float* buffer = nullptr;
    cudaError_t err = cudaMallocHost((void**)&buffer, n * sizeof(float));
    if (err != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return buffer;
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
        for (std::size_t d = 0; d < plan.size(); d++) (*device_ms)[d] = 0;
    }
    int device_count = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    if ((int)plan.size() > device_count) return cudaErrorInvalidValue;
    if (plan.size() == 0) return cudaSuccess;

    CurrentDeviceGuard guard;
    std::size_t k = plan.size();
    cudaStream_t* streams = new cudaStream_t[k];
    float** buffers = new float*[k];
    cudaEvent_t* starts = new cudaEvent_t[k];
    cudaEvent_t* stops = new cudaEvent_t[k];
    for (std::size_t d = 0; d < k; d++) {
        streams[d] = nullptr;
        buffers[d] = nullptr;
        starts[d] = nullptr;
        stops[d] = nullptr;
    }
    cudaError_t err = cudaSuccess;

    // make everything
    for (std::size_t d = 0; d < k; d++) {
        if (plan[d].count == 0) continue;
        err = cudaSetDevice((int)d);
        if (err != cudaSuccess) break;
        err = cudaStreamCreateWithFlags(&streams[d], cudaStreamNonBlocking);
        if (err != cudaSuccess) break;
        err = cudaMalloc((void**)&buffers[d], plan[d].count * sizeof(float));
        if (err != cudaSuccess) break;
        if (device_ms != nullptr) {
            err = cudaEventCreate(&starts[d]);
            if (err != cudaSuccess) break;
            err = cudaEventCreate(&stops[d]);
            if (err != cudaSuccess) break;
        }
    }

    // queue the work
    if (err == cudaSuccess) {
        for (std::size_t d = 0; d < k; d++) {
            if (plan[d].count == 0) continue;
            std::size_t count = plan[d].count;
            err = cudaSetDevice((int)d);
            if (err != cudaSuccess) break;
            if (starts[d] != nullptr) {
                err = cudaEventRecord(starts[d], streams[d]);
                if (err != cudaSuccess) break;
            }
            err = cudaMemcpyAsync(buffers[d], in + plan[d].first, count * sizeof(float), cudaMemcpyHostToDevice,
                                  streams[d]);
            if (err != cudaSuccess) break;
            unsigned blocks = (unsigned)((count + 255) / 256);
            scale_kernel<<<blocks, 256, 0, streams[d]>>>(buffers[d], count, factor);
            err = cudaGetLastError();
            if (err != cudaSuccess) break;
            err = cudaMemcpyAsync(out + plan[d].first, buffers[d], count * sizeof(float), cudaMemcpyDeviceToHost,
                                  streams[d]);
            if (err != cudaSuccess) break;
            if (stops[d] != nullptr) {
                err = cudaEventRecord(stops[d], streams[d]);
                if (err != cudaSuccess) break;
            }
        }
    }

    // wait for all of them
    if (err == cudaSuccess) {
        for (std::size_t d = 0; d < k; d++) {
            if (plan[d].count == 0) continue;
            err = cudaStreamSynchronize(streams[d]);
            if (err != cudaSuccess) break;
            if (device_ms != nullptr) {
                err = cudaEventElapsedTime(&(*device_ms)[d], starts[d], stops[d]);
                if (err != cudaSuccess) break;
            }
        }
    }

    // clean up, each device with itself current
    for (std::size_t d = 0; d < k; d++) {
        if (streams[d] == nullptr && buffers[d] == nullptr && starts[d] == nullptr && stops[d] == nullptr) continue;
        cudaSetDevice((int)d);
        if (streams[d] != nullptr) cudaStreamSynchronize(streams[d]);
        if (starts[d] != nullptr) cudaEventDestroy(starts[d]);
        if (stops[d] != nullptr) cudaEventDestroy(stops[d]);
        if (buffers[d] != nullptr) cudaFree(buffers[d]);
        if (streams[d] != nullptr) cudaStreamDestroy(streams[d]);
    }
    delete[] streams;
    delete[] buffers;
    delete[] starts;
    delete[] stops;
    return err;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    int device_count = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    if ((int)plan.size() > device_count) return cudaErrorInvalidValue;

    std::size_t k = plan.size();
    cudaError_t* errors = new cudaError_t[k];
    std::thread* threads = new std::thread[k];
    for (std::size_t d = 0; d < k; d++) errors[d] = cudaSuccess;

    for (std::size_t d = 0; d < k; d++) {
        if (plan[d].count == 0) continue;   // no thread for an empty share
        threads[d] = std::thread([=] {
            Share s = plan[d];
            cudaError_t err = cudaSetDevice((int)d);
            float* buffer = nullptr;
            if (err == cudaSuccess) err = cudaMalloc((void**)&buffer, s.count * sizeof(float));
            if (err == cudaSuccess)
                err = cudaMemcpy(buffer, in + s.first, s.count * sizeof(float), cudaMemcpyHostToDevice);
            if (err == cudaSuccess) {
                scale_kernel<<<(unsigned)((s.count + 255) / 256), 256>>>(buffer, s.count, factor);
                err = cudaGetLastError();
            }
            if (err == cudaSuccess) err = cudaDeviceSynchronize();
            if (err == cudaSuccess)
                err = cudaMemcpy(out + s.first, buffer, s.count * sizeof(float), cudaMemcpyDeviceToHost);
            if (buffer != nullptr) {
                cudaError_t freed = cudaFree(buffer);
                if (err == cudaSuccess) err = freed;
            }
            errors[d] = err;
        });
    }
    for (std::size_t d = 0; d < k; d++)
        if (threads[d].joinable()) threads[d].join();

    cudaError_t result = cudaSuccess;
    for (std::size_t d = 0; d < k; d++) {
        if (errors[d] != cudaSuccess) {
            result = errors[d];
            break;
        }
    }
    delete[] threads;
    delete[] errors;
    return result;
}
