// Lesson 2, splitting work across GPUs: the reference solution of split_work.h.
// Generated from checker/lessons/02-splitting-work/master/split_work.master.cu by tools/lessons/make-exercise;
// edit the master, not this file.
#include "split_work.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <thread>
#include <vector>

// Hands the first failing call's code back to the caller, who then knows exactly which CUDA error
// stopped the work.
#define RETURN_IF_FAILED(call)                                     \
    do {                                                           \
        const cudaError_t failed_status_ = (call);                 \
        if (failed_status_ != cudaSuccess) return failed_status_;  \
    } while (0)

namespace {

// Makes the caller's current device current again on every path out of a scope: a function that
// leaves another device current sends the caller's next cudaMalloc or launch to the wrong GPU.
class CurrentDeviceGuard {
public:
    CurrentDeviceGuard()
    {
        if (cudaGetDevice(&saved_) != cudaSuccess) {
            saved_ = -1;
            cudaGetLastError();   // no device to come back to; that is not the caller's error
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
// More blocks than a GPU runs at once; past that, the grid-stride loop gives each thread more elements.
constexpr unsigned max_blocks = 65536;

constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// data[i] *= factor for every i < n, whatever the grid size. Given: the lesson is about the host side.
__global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

// Everything one device needs for its share of a run, kept together so that every way out of the run
// can release all of it.
struct Lane {
    int device = -1;
    Share share;
    float* data = nullptr;              // the share's elements on the device
    cudaStream_t stream = nullptr;      // the device's own queue: its copies and its kernel
    cudaEvent_t started = nullptr;      // recorded before the input copy ...
    cudaEvent_t finished = nullptr;     // ... and after the output copy, on the same stream
};

// Creates the lane's stream, events and device buffer. Call it with the lane's device current: a
// stream, an event and an allocation belong to the device that was current when they were made.
cudaError_t prepare_lane(Lane& lane)
{
    // Non-blocking: unrelated work on the legacy default stream cannot serialise this queue.
    RETURN_IF_FAILED(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking));
    RETURN_IF_FAILED(cudaEventCreate(&lane.started));
    RETURN_IF_FAILED(cudaEventCreate(&lane.finished));
    return cudaMalloc(&lane.data, lane.share.count * sizeof(float));
}

// Queues the share's whole round trip on its device, which must be current, and returns at once: with
// page-locked host memory none of these calls waits for the device, so the next device can be given
// its work right away.
cudaError_t queue_lane(Lane& lane, float* out, const float* in, float factor)
{
    const std::size_t bytes = lane.share.count * sizeof(float);
    RETURN_IF_FAILED(cudaEventRecord(lane.started, lane.stream));
    RETURN_IF_FAILED(cudaMemcpyAsync(lane.data, in + lane.share.first, bytes, cudaMemcpyHostToDevice, lane.stream));
    scale_kernel<<<blocks_for(lane.share.count), threads_per_block, 0, lane.stream>>>(lane.data, lane.share.count, factor);
    RETURN_IF_FAILED(cudaGetLastError());
    RETURN_IF_FAILED(cudaMemcpyAsync(out + lane.share.first, lane.data, bytes, cudaMemcpyDeviceToHost, lane.stream));
    return cudaEventRecord(lane.finished, lane.stream);
}

// Releases what prepare_lane made, even after a partial failure, with the lane's device current;
// reports the first error. Queued work finishes first: its stream and buffer must outlive it.
cudaError_t release_lane(Lane& lane)
{
    cudaError_t first_error = cudaSuccess;
    const auto keep_first = [&first_error](cudaError_t status) {
        if (first_error == cudaSuccess) first_error = status;
    };
    keep_first(cudaSetDevice(lane.device));
    if (lane.stream != nullptr) keep_first(cudaStreamSynchronize(lane.stream));
    if (lane.data != nullptr) keep_first(cudaFree(lane.data));
    if (lane.started != nullptr) keep_first(cudaEventDestroy(lane.started));
    if (lane.finished != nullptr) keep_first(cudaEventDestroy(lane.finished));
    if (lane.stream != nullptr) keep_first(cudaStreamDestroy(lane.stream));
    lane = Lane{lane.device, lane.share};
    return first_error;
}

// The plan's non-empty shares as lanes, share d on device d. An empty share has no work, and a device
// with nothing to do needs no stream, no buffer and no kernel (a grid of zero blocks would not launch).
cudaError_t lanes_for(const std::vector<Share>& plan, std::vector<Lane>& lanes)
{
    int device_count = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    if (plan.size() > static_cast<std::size_t>(device_count)) return cudaErrorInvalidValue;
    for (std::size_t d = 0; d < plan.size(); ++d)
        if (plan[d].count > 0) lanes.push_back(Lane{static_cast<int>(d), plan[d]});
    return cudaSuccess;
}

// Runs one share from start to end on the calling host thread: the work of one thread of
// scale_with_threads. Waiting here holds up this thread only, never the other devices.
cudaError_t run_lane_alone(Lane lane, float* out, const float* in, float factor)
{
    // A new host thread starts with device 0 current, whatever the thread that made it chose.
    cudaError_t status = cudaSetDevice(lane.device);
    if (status == cudaSuccess) status = prepare_lane(lane);
    if (status == cudaSuccess) status = queue_lane(lane, out, in, factor);
    if (status == cudaSuccess) status = cudaStreamSynchronize(lane.stream);
    const cudaError_t released = release_lane(lane);
    return status != cudaSuccess ? status : released;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    std::vector<Share> plan;
    if (parts <= 0) return plan;
    const std::size_t count = static_cast<std::size_t>(parts);
    const std::size_t base = n / count, extra = n % count;
    std::size_t first = 0;
    for (std::size_t i = 0; i < count; ++i) {
        // The first n % parts shares take one element more, so no share is more than one element
        // longer than another and none of the n elements is left out.
        const std::size_t size = base + (i < extra ? 1 : 0);
        plan.push_back(Share{first, size});
        first += size;
    }
    return plan;
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    std::vector<Share> plan;
    double total = 0;
    for (double weight : weights) {
        if (!(weight >= 0)) return plan;   // a negative weight (or NaN) means nothing sensible
        total += weight;
    }
    if (weights.empty() || !(total > 0)) return plan;
    // Each share first gets the whole part of its ideal count; the elements left over go one each to
    // the shares with the largest fractions, so every count stays within one of its ideal and the
    // counts add up to n exactly.
    std::vector<std::size_t> counts(weights.size());
    std::vector<double> fractions(weights.size());
    std::size_t given = 0;
    for (std::size_t i = 0; i < weights.size(); ++i) {
        const double ideal = static_cast<double>(n) * (weights[i] / total);
        counts[i] = std::min(static_cast<std::size_t>(ideal), n - given);
        fractions[i] = ideal - static_cast<double>(counts[i]);
        given += counts[i];
    }
    std::vector<std::size_t> order(weights.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return fractions[a] > fractions[b]; });
    for (std::size_t k = 0; given < n; k = (k + 1) % order.size()) {
        if (weights[order[k]] == 0) continue;   // a device with no weight gets nothing at all
        ++counts[order[k]];
        ++given;
    }
    std::size_t first = 0;
    for (std::size_t count : counts) {
        plan.push_back(Share{first, count});
        first += count;
    }
    return plan;
}

float* allocate_host_buffer(std::size_t n)
{
    if (n == 0) return nullptr;
    void* buffer = nullptr;
    // Page-locked: the copy engines read and write it directly, so cudaMemcpyAsync returns at once.
    // Pinning costs far more than malloc (about 160 ms for 256 MiB), which is why it is done once.
    if (cudaMallocHost(&buffer, n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();   // "no memory" is the nullptr the caller gets, not an error left behind
        return nullptr;
    }
    return static_cast<float*>(buffer);
}

void free_host_buffer(float* buffer)
{
    if (buffer != nullptr) cudaFreeHost(buffer);
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    if (device_ms != nullptr) device_ms->assign(plan.size(), 0.0f);
    std::vector<Lane> lanes;
    RETURN_IF_FAILED(lanes_for(plan, lanes));
    if (lanes.empty()) return cudaSuccess;
    CurrentDeviceGuard restore_current_device;

    // Three passes over the devices. Nothing before the last pass waits for a device, so every device
    // has its work queued within microseconds of the first.
    cudaError_t status = cudaSuccess;
    for (Lane& lane : lanes) {
        if (status == cudaSuccess) status = cudaSetDevice(lane.device);
        if (status == cudaSuccess) status = prepare_lane(lane);
    }
    for (Lane& lane : lanes) {
        // The current device decides where launches go; copies are queued with it current as well.
        if (status == cudaSuccess) status = cudaSetDevice(lane.device);
        if (status == cudaSuccess) status = queue_lane(lane, out, in, factor);
    }
    // Then wait for each device in turn: while the host waits for one, the others keep working.
    for (Lane& lane : lanes) {
        if (status != cudaSuccess) break;
        status = cudaStreamSynchronize(lane.stream);
        // Both events are on this device's stream, so their times come from one clock.
        if (status == cudaSuccess && device_ms != nullptr)
            status = cudaEventElapsedTime(&(*device_ms)[static_cast<std::size_t>(lane.device)], lane.started,
                                          lane.finished);
    }
    for (Lane& lane : lanes) {
        const cudaError_t released = release_lane(lane);
        if (status == cudaSuccess) status = released;
    }
    return status;
}


#include <omp.h>
cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    int devices = 0;
    RETURN_IF_FAILED(cudaGetDeviceCount(&devices));
    if (plan.size() > static_cast<std::size_t>(devices)) return cudaErrorInvalidValue;
    CurrentDeviceGuard keep;
    std::vector<cudaError_t> statuses(plan.size(), cudaSuccess);
    const int n = static_cast<int>(plan.size());
#pragma omp parallel for num_threads(n)
    for (int d = 0; d < n; ++d) {
        if (plan[d].count == 0) continue;
        cudaError_t status = cudaSetDevice(d);
        float* buffer = nullptr;
        const std::size_t bytes = plan[d].count * sizeof(float);
        if (status == cudaSuccess) status = cudaMalloc(&buffer, bytes);
        if (status == cudaSuccess) status = cudaMemcpy(buffer, in + plan[d].first, bytes, cudaMemcpyHostToDevice);
        if (status == cudaSuccess) { scale_kernel<<<256, 256>>>(buffer, plan[d].count, factor); status = cudaGetLastError(); }
        if (status == cudaSuccess) status = cudaMemcpy(out + plan[d].first, buffer, bytes, cudaMemcpyDeviceToHost);
        cudaFree(buffer);
        statuses[d] = status;
    }
    for (cudaError_t s : statuses) if (s != cudaSuccess) return s;
    return cudaSuccess;
}
