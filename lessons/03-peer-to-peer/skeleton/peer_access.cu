// Lesson 3, peer-to-peer memory access: write the bodies marked TODO(1) to TODO(7).
// Each TODO says what to write and names the section of lessons/03-peer-to-peer/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 3 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
//   tools/mgpu run 3     builds this file with main.cu and shows what works so far
//   tools/mgpu check 3   grades it on several simulated machines
// Every body compiles as given and returns a harmless default until you write it.
#include "peer_access.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

// Hands the first failing call's code back to the caller, who then knows exactly which CUDA error
// stopped the work.
#define RETURN_IF_FAILED(call)                                     \
    do {                                                           \
        const cudaError_t failed_status_ = (call);                 \
        if (failed_status_ != cudaSuccess) return failed_status_;  \
    } while (0)

namespace {

// Makes the caller's current device current again on every path out of a scope. A library function
// that leaves another device current breaks the caller's next cudaMalloc or kernel launch, which
// would then land on the wrong GPU.
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

// Directions (from, to) that open_peer_access opened. close_all_peer_access closes exactly these,
// and leaves access that other code opened to that code. A function-local static is created on first
// use, so the file runs no code of its own before main.
[[maybe_unused]] std::set<std::pair<int, int>>& opened_directions()
{
    static std::set<std::pair<int, int>> directions;
    return directions;
}

constexpr unsigned threads_per_block = 256;
// Far more blocks than a GPU runs at once (an H200 holds about 1000 of these), so the last, partly
// filled wave costs little; beyond that the grid-stride loops let each thread take several elements.
constexpr unsigned max_blocks = 65536;

// Enough blocks to give each of n elements its own thread, capped at max_blocks.
// [[maybe_unused]] on opened_directions, blocks_for and scale_kernel keeps the compiler quiet until
// your code uses them; you may delete it then.
[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// dst[i] = factor * src[i] for every i < n, whatever the grid size.
[[maybe_unused]] __global__ void scale_kernel(float* dst, const float* src, std::size_t n, float factor)
{
    // TODO(5a) (lesson 3, section 3.8): the kernel that scale_from_peer and the pipelined version
    // launch: dst[i] = factor * src[i] for every i < n, whatever the size of the grid.
    (void)dst, (void)src, (void)n, (void)factor;   // delete this line once you use them
}

}  // namespace

bool can_reach(int from, int to)
{
    // TODO(1) (lesson 3, section 3.4; contract: Task 1 in peer_access.h): whether kernels on `from`
    // can reach memory on `to`, with no error left behind for any pair of ids.
    (void)from, (void)to;   // delete this line once you use them
    return false;
}

cudaError_t open_peer_access(int from, int to)
{
    // TODO(2) (lesson 3, sections 3.5 and 3.6; contract: Task 2 in peer_access.h): open the one
    // direction from -> to, or say with 217 why it cannot be opened.
    (void)from, (void)to;   // delete this line once you use them
    return cudaErrorNotSupported;
}

int open_all_peer_access()
{
    // TODO(3) (lesson 3, section 3.5; contract: Task 3 in peer_access.h): open every direction the
    // machine allows and count the open ones.
    return 0;
}

cudaError_t copy_between_devices(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes)
{
    // TODO(4) (lesson 3, sections 3.7 and 3.9; contract: Task 4 in peer_access.h): copy `bytes`
    // from src on one device to dst on another, finished when the function returns.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)bytes;   // delete once used
    return cudaErrorNotSupported;
}

cudaError_t scale_from_peer(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            float factor)
{
    // TODO(5) (lesson 3, sections 3.8 and 3.9; contract: Task 5 in peer_access.h): dst = factor *
    // src computed on dst_device, whether or not it may read src_device's memory. Write
    // scale_kernel (TODO(5a)) first.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)n, (void)factor;   // delete once used
    return cudaErrorNotSupported;
}

cudaError_t pipelined_scale(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            std::size_t chunk, float factor)
{
    // TODO(6) (lesson 3, section 3.10; contract: Task 6 in peer_access.h): the result of
    // scale_from_peer, with each chunk's copy overlapping the previous chunk's kernel.
    (void)dst, (void)dst_device, (void)src, (void)src_device;   // delete these two lines once you
    (void)n, (void)chunk, (void)factor;                           // use the parameters
    return cudaErrorNotSupported;
}

int close_all_peer_access()
{
    // TODO(7) (lesson 3, section 3.11; contract: Task 7 in peer_access.h): close every direction
    // this program opened and count the ones that closed.
    return 0;
}
