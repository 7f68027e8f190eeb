#ifdef SOLUTION
// Lesson 3, peer-to-peer memory access: the reference solution of peer_access.h.
// Generated from checker/lessons/03-peer-to-peer/master/peer_access.master.cu by tools/lessons/make-exercise;
// edit the master, not this file.
#else
// Lesson 3, peer-to-peer memory access: write the bodies marked TODO(1) to TODO(7).
// Each TODO says what to write and names the section of lessons/03-peer-to-peer/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 3 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
//   tools/mgpu run 3     builds this file with main.cu and shows what works so far
//   tools/mgpu check 3   grades it on several simulated machines
// Every body compiles as given and returns a harmless default until you write it.
#endif
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
#ifdef SOLUTION
std::set<std::pair<int, int>>& opened_directions()
#else
[[maybe_unused]] std::set<std::pair<int, int>>& opened_directions()
#endif
{
    static std::set<std::pair<int, int>> directions;
    return directions;
}

constexpr unsigned threads_per_block = 256;
// Far more blocks than a GPU runs at once (an H200 holds about 1000 of these), so the last, partly
// filled wave costs little; beyond that the grid-stride loops let each thread take several elements.
constexpr unsigned max_blocks = 65536;

// Enough blocks to give each of n elements its own thread, capped at max_blocks.
#ifdef SOLUTION
constexpr unsigned blocks_for(std::size_t n)
#else
// [[maybe_unused]] on opened_directions, blocks_for and scale_kernel keeps the compiler quiet until
// your code uses them; you may delete it then.
[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
#endif
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// dst[i] = factor * src[i] for every i < n, whatever the grid size.
#ifdef SOLUTION
__global__ void scale_kernel(float* dst, const float* src, std::size_t n, float factor)
#else
[[maybe_unused]] __global__ void scale_kernel(float* dst, const float* src, std::size_t n, float factor)
#endif
{
#ifdef SOLUTION
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = factor * src[i];
#else
    // TODO(5a) (lesson 3, section 3.8): the kernel that scale_from_peer and the pipelined version
    // launch: dst[i] = factor * src[i] for every i < n, whatever the size of the grid.
    (void)dst, (void)src, (void)n, (void)factor;   // delete this line once you use them
#endif
}

#ifdef SOLUTION
// The same four floats per access, for 16-byte aligned dst and src holding n = 4 * quads + tail floats
// (tail < 4). With one float per access an H200 keeps too few bytes in flight to fill its memory
// (measured: about 70% of its device-to-device copy bandwidth); 16-byte accesses reach the copy
// bandwidth.
__global__ void scale4_kernel(float4* dst, const float4* src, std::size_t quads, unsigned tail, float factor)
{
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t q = first; q < quads; q += stride) {
        const float4 v = src[q];
        dst[q] = make_float4(factor * v.x, factor * v.y, factor * v.z, factor * v.w);
    }
    if (first < tail)   // the last n % 4 floats, right after the quads
        reinterpret_cast<float*>(dst + quads)[first] = factor * reinterpret_cast<const float*>(src + quads)[first];
}

bool aligned_for_float4(const void* p)
{
    return reinterpret_cast<std::uintptr_t>(p) % alignof(float4) == 0;
}

// Queues dst[i] = factor * src[i] for i < n on `stream` of the current device, as one kernel: float4
// accesses when both pointers are 16-byte aligned, single floats otherwise.
cudaError_t launch_scale(float* dst, const float* src, std::size_t n, float factor, cudaStream_t stream = nullptr)
{
    if (aligned_for_float4(dst) && aligned_for_float4(src)) {
        const std::size_t quads = n / 4;
        scale4_kernel<<<blocks_for(quads), threads_per_block, 0, stream>>>(
            reinterpret_cast<float4*>(dst), reinterpret_cast<const float4*>(src), quads,
            static_cast<unsigned>(n % 4), factor);
    } else {
        scale_kernel<<<blocks_for(n), threads_per_block, 0, stream>>>(dst, src, n, factor);
    }
    return cudaGetLastError();
}

#endif
#ifdef SOLUTION
// Everything one pipelined_scale call creates, kept together so that every way out of the call
// can release all of it.
struct Pipeline {
    cudaStream_t copy_stream = nullptr;
    cudaStream_t compute_stream = nullptr;
    // Recorded again after every chunk's copy. One event serves all the chunks because
    // cudaStreamWaitEvent waits for what the event captured when the wait was queued; a later
    // cudaEventRecord does not change a wait already queued (CUDA Runtime API, cudaEventRecord).
    // On an H200, an event per chunk, created and destroyed in every call, cost about 6% of a 256 MiB
    // pipeline.
    cudaEvent_t chunk_arrived = nullptr;
};

cudaError_t create_pipeline(Pipeline& pipeline)
{
    // Non-blocking streams never wait for the legacy default stream (and it never waits for them),
    // so unrelated work on stream 0 cannot serialise the copies against the kernels.
    RETURN_IF_FAILED(cudaStreamCreateWithFlags(&pipeline.copy_stream, cudaStreamNonBlocking));
    RETURN_IF_FAILED(cudaStreamCreateWithFlags(&pipeline.compute_stream, cudaStreamNonBlocking));
    // Only ever waited on, never timed: an event without timing is the cheaper kind to record and
    // wait for (CUDA Runtime API, cudaEventCreateWithFlags).
    return cudaEventCreateWithFlags(&pipeline.chunk_arrived, cudaEventDisableTiming);
}

// Queues every chunk: its copy on the copy stream, then its kernel on the compute stream, ordered by
// the event recorded after that copy. The host never waits here, so copy k+1 can run while kernel k
// computes.
// Each chunk lands where its result belongs, in dst, and is scaled there in place. No staging buffer
// means no extra memory and nothing to allocate: on an H200, cudaMalloc and cudaFree of a 256 MiB
// buffer take 0.15-0.4 ms, about as long as the whole pipeline's work on it.
cudaError_t enqueue_pipeline(const Pipeline& pipeline, float* dst, int dst_device, const float* src,
                             int src_device, std::size_t n, std::size_t chunk, float factor)
{
    for (std::size_t first = 0; first < n; first += chunk) {
        const std::size_t count = std::min(chunk, n - first);
        RETURN_IF_FAILED(cudaMemcpyPeerAsync(dst + first, dst_device, src + first, src_device,
                                             count * sizeof(float), pipeline.copy_stream));
        RETURN_IF_FAILED(cudaEventRecord(pipeline.chunk_arrived, pipeline.copy_stream));
        // Without this wait the kernel could scale the chunk before it has landed.
        RETURN_IF_FAILED(cudaStreamWaitEvent(pipeline.compute_stream, pipeline.chunk_arrived, 0));
        RETURN_IF_FAILED(launch_scale(dst + first, dst + first, count, factor, pipeline.compute_stream));
    }
    return cudaSuccess;
}

// After a failure part of the work may still be queued; it must finish before its streams go away.
void wait_for_queued_work(const Pipeline& pipeline)
{
    if (pipeline.copy_stream != nullptr) cudaStreamSynchronize(pipeline.copy_stream);
    if (pipeline.compute_stream != nullptr) cudaStreamSynchronize(pipeline.compute_stream);
    cudaGetLastError();   // the caller gets the first error from the return value
}

// Releases whatever create_pipeline made, even after a partial failure; reports the first error.
cudaError_t destroy_pipeline(Pipeline& pipeline)
{
    cudaError_t first_error = cudaSuccess;
    const auto keep_first = [&first_error](cudaError_t status) {
        if (first_error == cudaSuccess) first_error = status;
    };
    if (pipeline.chunk_arrived != nullptr) keep_first(cudaEventDestroy(pipeline.chunk_arrived));
    if (pipeline.compute_stream != nullptr) keep_first(cudaStreamDestroy(pipeline.compute_stream));
    if (pipeline.copy_stream != nullptr) keep_first(cudaStreamDestroy(pipeline.copy_stream));
    pipeline = Pipeline{};
    return first_error;
}

#endif
}  // namespace

bool can_reach(int from, int to)
{
#ifdef SOLUTION
    if (from == to) return false;   // a device is never its own peer: its own memory needs no access
    int can_access = 0;
    if (cudaDeviceCanAccessPeer(&can_access, from, to) != cudaSuccess) {
        cudaGetLastError();   // ids that are not devices give 101; the caller asked a yes-or-no question
        return false;
    }
    return can_access == 1;
#else
    // TODO(1) (lesson 3, section 3.4; contract: Task 1 in peer_access.h): whether kernels on `from`
    // can reach memory on `to`, with no error left behind for any pair of ids.
    (void)from, (void)to;   // delete this line once you use them
    return false;
#endif
}

cudaError_t open_peer_access(int from, int to)
{
#ifdef SOLUTION
    if (!can_reach(from, to)) return cudaErrorPeerAccessUnsupported;
    CurrentDeviceGuard restore_current_device;
    // Access is granted to kernels of the current device, so `from` must be current when enabling.
    RETURN_IF_FAILED(cudaSetDevice(from));
    const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
        // Already open is what the caller wants. The runtime still stores 704 as the last error,
        // where it would look like a failure to the next cudaGetLastError; read it away.
        cudaGetLastError();
        return cudaSuccess;
    }
    if (status == cudaSuccess) opened_directions().insert({from, to});
    return status;
#else
    // TODO(2) (lesson 3, sections 3.5 and 3.6; contract: Task 2 in peer_access.h): open the one
    // direction from -> to, or say with 217 why it cannot be opened.
    (void)from, (void)to;   // delete this line once you use them
    return cudaErrorNotSupported;
#endif
}

int open_all_peer_access()
{
#ifdef SOLUTION
    int device_count = 0;
    if (cudaGetDeviceCount(&device_count) != cudaSuccess) {
        cudaGetLastError();   // no devices: nothing to open
        return 0;
    }
    int open = 0;
    for (int from = 0; from < device_count; ++from)
        for (int to = 0; to < device_count; ++to)
            if (can_reach(from, to) && open_peer_access(from, to) == cudaSuccess) ++open;
    return open;
#else
    // TODO(3) (lesson 3, section 3.5; contract: Task 3 in peer_access.h): open every direction the
    // machine allows and count the open ones.
    return 0;
#endif
}

cudaError_t copy_between_devices(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes)
{
#ifdef SOLUTION
    if (bytes == 0) return cudaSuccess;
    CurrentDeviceGuard restore_current_device;
    RETURN_IF_FAILED(cudaSetDevice(dst_device));
    // Correct with or without peer access: without it the runtime stages the bytes through host memory.
    RETURN_IF_FAILED(cudaMemcpyPeer(dst, dst_device, src, src_device, bytes));
    // cudaMemcpyPeer may return before the bytes have landed, and the caller was promised a finished copy.
    return cudaDeviceSynchronize();
#else
    // TODO(4) (lesson 3, sections 3.7 and 3.9; contract: Task 4 in peer_access.h): copy `bytes`
    // from src on one device to dst on another, finished when the function returns.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)bytes;   // delete once used
    return cudaErrorNotSupported;
#endif
}

cudaError_t scale_from_peer(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            float factor)
{
#ifdef SOLUTION
    if (n == 0) return cudaSuccess;
    CurrentDeviceGuard restore_current_device;
    RETURN_IF_FAILED(cudaSetDevice(dst_device));
    // A kernel may dereference another device's memory only once access was opened FROM its own device;
    // without it the kernel faults with 700. That the pair could peer is not enough.
    const bool reads_src_directly =
        src_device == dst_device || opened_directions().count({dst_device, src_device}) == 1;
    if (reads_src_directly) {
        RETURN_IF_FAILED(launch_scale(dst, src, n, factor));
        return cudaDeviceSynchronize();
    }
    // No peer path: bring the input over into dst itself (the runtime stages it through host memory),
    // then scale it there in place. dst already has room for n floats on the right device, so there is
    // nothing to allocate and nothing to free.
    RETURN_IF_FAILED(copy_between_devices(dst, dst_device, src, src_device, n * sizeof(float)));
    RETURN_IF_FAILED(launch_scale(dst, dst, n, factor));
    return cudaDeviceSynchronize();
#else
    // TODO(5) (lesson 3, sections 3.8 and 3.9; contract: Task 5 in peer_access.h): dst = factor *
    // src computed on dst_device, whether or not it may read src_device's memory. Write
    // scale_kernel (TODO(5a)) first.
    (void)dst, (void)dst_device, (void)src, (void)src_device, (void)n, (void)factor;   // delete once used
    return cudaErrorNotSupported;
#endif
}

cudaError_t pipelined_scale(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            std::size_t chunk, float factor)
{
#ifdef SOLUTION
    if (n == 0) return cudaSuccess;
    if (chunk == 0) return cudaErrorInvalidValue;
    chunk = std::min(chunk, n);
    CurrentDeviceGuard restore_current_device;
    RETURN_IF_FAILED(cudaSetDevice(dst_device));
    Pipeline pipeline;
    cudaError_t status = create_pipeline(pipeline);
    if (status == cudaSuccess)
        status = enqueue_pipeline(pipeline, dst, dst_device, src, src_device, n, chunk, factor);
    // One wait covers everything: the last kernel waited for the last copy, which the copy stream ran
    // after all the earlier ones.
    if (status == cudaSuccess) status = cudaStreamSynchronize(pipeline.compute_stream);
    else wait_for_queued_work(pipeline);
    const cudaError_t released = destroy_pipeline(pipeline);
    return status != cudaSuccess ? status : released;
#else
    // TODO(6) (lesson 3, section 3.10; contract: Task 6 in peer_access.h): the result of
    // scale_from_peer, with each chunk's copy overlapping the previous chunk's kernel.
    (void)dst, (void)dst_device, (void)src, (void)src_device;   // delete these two lines once you
    (void)n, (void)chunk, (void)factor;                           // use the parameters
    return cudaErrorNotSupported;
#endif
}

int close_all_peer_access()
{
#ifdef SOLUTION
    CurrentDeviceGuard restore_current_device;
    int closed = 0;
    for (const auto& [from, to] : opened_directions()) {
        // Disabling, like enabling, acts for the current device.
        if (cudaSetDevice(from) == cudaSuccess && cudaDeviceDisablePeerAccess(to) == cudaSuccess) {
            ++closed;
        } else {
            cudaGetLastError();   // already gone (705) or no such device any more: nothing left to close
        }
    }
    opened_directions().clear();
    return closed;
#else
    // TODO(7) (lesson 3, section 3.11; contract: Task 7 in peer_access.h): close every direction
    // this program opened and count the ones that closed.
    return 0;
#endif
}
