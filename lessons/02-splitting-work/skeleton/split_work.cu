// Lesson 2, splitting work across GPUs: write the bodies marked TODO(1) to TODO(6).
// Each TODO says what to write and names the section of lessons/02-splitting-work/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 2 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
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
    // TODO(1) (lesson 2, section 2.2; contract: Task 1 in split_work.h): `parts` shares of n
    // elements, as even as they can be, in order from element 0.
    (void)n, (void)parts;   // delete this line once you use them
    return {};
}

std::vector<Share> plan_weighted_split(std::size_t n, const std::vector<double>& weights)
{
    // TODO(2) (lesson 2, section 2.3; contract: Task 2 in split_work.h): shares in proportion to
    // the weights that add up to exactly n (largest-remainder method).
    (void)n, (void)weights;   // delete this line once you use them
    return {};
}

float* allocate_host_buffer(std::size_t n)
{
    // TODO(3) (lesson 2, section 2.6; contract: Task 3 in split_work.h): n floats of page-locked
    // host memory, and giving them back.
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
    // TODO(4) (lesson 2, sections 2.4 and 2.5; contract: Task 4 in split_work.h): out = factor *
    // in, each share of the plan on its own device, every device working at the same time, driven
    // from this one thread.
    // TODO(6) (lesson 2, section 2.8; contract: Task 6 in split_work.h), inside scale_on_devices:
    // each device's time for its share when device_ms is given. Add it once TODO(4) works.
    (void)out, (void)in, (void)factor, (void)plan, (void)device_ms;   // delete once you use them
    return cudaErrorNotSupported;
}

cudaError_t scale_with_threads(float* out, const float* in, float factor, const std::vector<Share>& plan)
{
    // TODO(5) (lesson 2, section 2.7; contract: Task 5 in split_work.h): the same result as TODO(4)
    // with one host thread per non-empty share.
    (void)out, (void)in, (void)factor, (void)plan;   // delete this line once you use them
    return cudaErrorNotSupported;
}
