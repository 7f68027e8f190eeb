// Lesson 3, peer-to-peer memory access: write the bodies marked TODO(1) to TODO(7).
// Each TODO names the section of lessons/03-peer-to-peer/README.md that teaches it.
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
    // TODO(5a) (lesson 3, section 3.8): a grid-stride loop, as in lesson 2: start at this thread's
    // global index, step by the number of threads in the whole grid, stop at n, and write
    // dst[i] = factor * src[i]. Compute the index in std::size_t (cast blockIdx.x before multiplying):
    // unsigned int arithmetic wraps around past 4 Gi elements.
    (void)dst, (void)src, (void)n, (void)factor;   // delete this line once you use them
}

}  // namespace

bool can_reach(int from, int to)
{
    // TODO(1) (lesson 3, section 3.4): ask the runtime with cudaDeviceCanAccessPeer(&answer, from, to).
    // - The same device is never its own peer: answer false without asking.
    // - Ids that are not devices make the call fail (101). Answer false, and clear that error with
    //   cudaGetLastError() so that it is not left behind for the caller to trip over.
    (void)from, (void)to;   // delete this line once you use them
    return false;
}

cudaError_t open_peer_access(int from, int to)
{
    // TODO(2) (lesson 3, sections 3.5 and 3.6): open ONE direction: kernels on `from` may then use
    // memory on `to`.
    // - Check first with can_reach; when it says no, return cudaErrorPeerAccessUnsupported (217)
    //   without calling cudaDeviceEnablePeerAccess at all.
    // - Enabling works on the CURRENT device: make `from` current, call cudaDeviceEnablePeerAccess(to, 0).
    //   Give the caller back their current device before returning, on every path
    //   (a CurrentDeviceGuard at the top of the function does that for you).
    // - 704 (cudaErrorPeerAccessAlreadyEnabled) means it is already open: treat it as success and
    //   clear it with cudaGetLastError(), because the runtime keeps it as the last error.
    // - Remember each direction you opened in opened_directions(); TODO(7) closes them.
    (void)from, (void)to;   // delete this line once you use them
    return cudaErrorNotSupported;
}

int open_all_peer_access()
{
    // TODO(3) (lesson 3, section 3.5): for every ordered pair (from, to) of the cudaGetDeviceCount
    // devices, open the direction with open_peer_access when can_reach says it can peer.
    // Count the directions that are open afterwards (already open counts too) and return the count.
    return 0;
}

cudaError_t copy_between_devices(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes)
{
    // TODO(4) (lesson 3, sections 3.7 and 3.9): one cudaMemcpyPeer(dst, dst_device, src, src_device, bytes).
    // It is correct whether or not the pair can peer. It may return before the copy has finished, so
    // wait for it (cudaDeviceSynchronize with dst_device current, then restore the caller's device).
    // Copying 0 bytes is a success.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)bytes;   // delete once used
    return cudaErrorNotSupported;
}

cudaError_t scale_from_peer(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            float factor)
{
    // TODO(5) (lesson 3, sections 3.8 and 3.9): dst[i] = factor * src[i], computed on dst_device.
    // - First write scale_kernel above (TODO(5a)).
    // - Make dst_device current (and restore the caller's device at the end).
    // - If access from dst_device to src_device is open (in opened_directions()), or both are the same
    //   device, launch scale_kernel<<<blocks_for(n), threads_per_block>>> on src directly: the kernel
    //   reads across the link.
    // - Otherwise reading src from a kernel on dst_device faults (700). Copy src into dst itself with
    //   copy_between_devices (dst is on dst_device and holds n floats), then scale dst in place:
    //   scale_kernel<<<...>>>(dst, dst, n, factor). No buffer to allocate, none to free.
    // - Check the launch with cudaGetLastError(), wait with cudaDeviceSynchronize(). n == 0 does nothing.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)n, (void)factor;   // delete once used
    return cudaErrorNotSupported;
}

cudaError_t pipelined_scale(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            std::size_t chunk, float factor)
{
    // TODO(6) (lesson 3, section 3.10): the same result as scale_from_peer, with copies and kernels
    // overlapping. With dst_device current (restore the caller's device at the end):
    // - Create a copy stream and a compute stream with cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
    //   and an event (one per chunk, or one recorded again for every chunk: section 3.10).
    // - For each chunk of `chunk` elements (the last one may be shorter), at offset `first`:
    //     cudaMemcpyPeerAsync(dst + first, dst_device, src + first, src_device, bytes, copy stream):
    //       the chunk lands where its result belongs;
    //     cudaEventRecord(event, copy stream);
    //     cudaStreamWaitEvent(compute stream, event, 0);
    //     scale_kernel<<<blocks_for(count), threads_per_block, 0, compute stream>>>(dst + first,
    //       dst + first, count, factor): scales the chunk in place; then cudaGetLastError().
    // - Wait once at the end with cudaStreamSynchronize(compute stream). Never cudaDeviceSynchronize
    //   inside the loop: it would stop the overlap.
    // - Destroy the events and streams on every path (and free anything you cudaMalloc'ed).
    // - n == 0 does nothing; chunk == 0 returns cudaErrorInvalidValue.
    (void)dst, (void)dst_device, (void)src, (void)src_device;   // delete these two lines once you
    (void)n, (void)chunk, (void)factor;                           // use the parameters
    return cudaErrorNotSupported;
}

int close_all_peer_access()
{
    // TODO(7) (lesson 3, section 3.11): close every direction in opened_directions(): make `from`
    // current and call cudaDeviceDisablePeerAccess(to). Count the ones that close; for one that fails
    // (705: not open any more), clear the error with cudaGetLastError(). Then empty opened_directions(),
    // restore the caller's device, and return the count.
    return 0;
}
