// Lesson 2, splitting work across GPUs: write the bodies marked TODO(1) to TODO(6).
// Each TODO names the section of lessons/02-splitting-work/README.md that teaches it.
//   tools/mgpu run 2     builds this file with main.cu and shows what works so far
//   tools/mgpu check 2   grades it on several simulated machines
// Every body compiles as given and returns a harmless default until you write it.
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

// [[maybe_unused]] on blocks_for and scale_kernel keeps the compiler quiet until your code uses them.
[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// data[i] *= factor for every i < n, whatever the grid size. Given: the lesson is about the host side.
[[maybe_unused]] __global__ void scale_kernel(float* data, std::size_t n, float factor)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}

}  // namespace

std::vector<Share> plan_even_split(std::size_t n, int parts)
{
    // TODO(1) (lesson 2, section 2.2): `parts` shares in order from element 0. Each gets n / parts
    // elements and the first n % parts shares one more; each share's first is where the previous one
    // ended. parts <= 0 gives an empty plan. Check n = 0, n = 1 and n < parts on paper first.
    (void)n, (void)parts;   // delete this line once you use them
    return {};
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    // TODO(2) (lesson 2, section 2.3): one share per weight, in order from element 0. Share i's ideal
    // size is n * weights[i] / (sum of weights). Give each share the whole part of its ideal, then hand
    // the elements still missing out one each to the shares with the largest fractional parts, so that
    // the counts add up to n exactly. A weight of 0 gets nothing. Return an empty plan for no weights,
    // a negative weight, or weights that add up to 0.
    (void)n, (void)weights;   // delete this line once you use them
    return {};
}

float* allocate_host_buffer(std::size_t n)
{
    // TODO(3) (lesson 2, section 2.6): allocate n floats of page-locked host memory with cudaMallocHost.
    // n = 0 gives nullptr. When the allocation fails, clear the error with cudaGetLastError() and return
    // nullptr.
    (void)n;   // delete this line once you use it
    return nullptr;
}

void free_host_buffer(float* buffer)
{
    // TODO(3), continued: give the buffer back with cudaFreeHost (nullptr: nothing to do).
    (void)buffer;   // delete this line once you use it
}

cudaError_t scale_on_devices(float* out, const float* in, float factor, const std::vector<Share>& plan,
                             std::vector<float>* device_ms)
{
    // TODO(4) (lesson 2, sections 2.4 and 2.5): one host thread drives every device.
    // - Give up with cudaErrorInvalidValue when plan.size() is larger than cudaGetDeviceCount's count.
    //   Skip empty shares entirely (a kernel of 0 blocks is an invalid launch).
    // - Remember the caller's device (CurrentDeviceGuard does it) and give it back at the end.
    // - First pass, for each share d: cudaSetDevice(d), then its stream (cudaStreamCreateWithFlags with
    //   cudaStreamNonBlocking) and its device buffer (cudaMalloc of count floats).
    // - Second pass, for each share d: cudaSetDevice(d), then on d's stream:
    //     cudaMemcpyAsync(buffer, in + first, bytes, cudaMemcpyHostToDevice, stream);
    //     scale_kernel<<<blocks_for(count), threads_per_block, 0, stream>>>(buffer, count, factor);
    //     cudaGetLastError();
    //     cudaMemcpyAsync(out + first, buffer, bytes, cudaMemcpyDeviceToHost, stream);
    //   Nothing in this pass may wait: no cudaMemcpy, no synchronisation.
    // - Third pass: cudaStreamSynchronize each stream. Then free each buffer and destroy each stream
    //   with its device current, on every path, also after an error (section 2.9).
    // TODO(6) (lesson 2, section 2.8), in the same function once TODO(4) works: when device_ms is not
    // null, resize it to plan.size() (0 for empty shares), create two events per device with that
    // device current, record one on d's stream before the input copy and one after the output copy,
    // and after the stream's synchronisation read cudaEventElapsedTime into (*device_ms)[d].
    // Destroy the events with the rest.
    (void)out, (void)in, (void)factor, (void)plan, (void)device_ms;   // delete once you use them
    return cudaErrorNotSupported;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    // TODO(5) (lesson 2, section 2.7): the same result as TODO(4) with one std::thread per non-empty
    // share (or an OpenMP parallel loop). Thread d calls cudaSetDevice(d) first: a new thread starts on
    // device 0. It then makes its stream and buffer, queues the round trip as in TODO(4), waits with
    // cudaStreamSynchronize (that holds up only this thread), and frees what it made. Start every
    // thread before joining any; store each thread's status in its own slot of a vector and return the
    // first error. The caller's thread never changes its current device.
    (void)out, (void)in, (void)factor, (void)plan;   // delete this line once you use them
    return cudaErrorNotSupported;
}
