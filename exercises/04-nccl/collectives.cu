// Lesson 4, multi-GPU with NCCL: write the bodies marked TODO(1) to TODO(7).
// Each TODO names the section of lessons/04-nccl/README.md that teaches it.
//   tools/mgpu run 4     builds this file with main.cu and shows what works so far
//   tools/mgpu check 4   grades it on several simulated machines
// Every body compiles as given and returns ncclInvalidUsage until you write it.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>

// Hands the first failing NCCL call's result back to the caller.
#define NCCL_RETURN_IF_FAILED(call)                                \
    do {                                                           \
        const ncclResult_t failed_result_ = (call);                \
        if (failed_result_ != ncclSuccess) return failed_result_;  \
    } while (0)

// A failing CUDA call becomes ncclUnhandledCudaError, as NCCL reports CUDA failures itself.
#define CUDA_RETURN_IF_FAILED(call)                                \
    do {                                                           \
        if ((call) != cudaSuccess) return ncclUnhandledCudaError;  \
    } while (0)

namespace {

// Makes the caller's current device current again on every path out of a scope.
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

constexpr unsigned threads_per_block = 256;
constexpr unsigned max_blocks = 65536;

// [[maybe_unused]] on the given helpers keeps the compiler quiet until your code uses them.
[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// Given: the gradients of one rank for one step. Each rank computes different values, so an
// average that leaves a rank out, or sums instead of averaging, shows in every element.
[[maybe_unused]] __global__ void produce_gradients(float* gradients, std::size_t n, int rank, int step)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        gradients[i] = static_cast<float>(static_cast<int>(i % 61) + 7 * rank + step) * 0.5f;
}

// Given: work that needs none of the gradients (the next layer's activations, say).
[[maybe_unused]] __global__ void advance_activations(float* activations, std::size_t n)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        activations[i] = 0.5f * activations[i] + 1.0f;
}


}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    // TODO(1) (lesson 4, section 4.2): one communicator per device, all made from this thread.
    // - An empty list, or a device outside [0, cudaGetDeviceCount), gives ncclInvalidArgument.
    // - Remember the caller's device (CurrentDeviceGuard does it) to give it back at the end.
    // - ncclGetUniqueId once, then between ncclGroupStart() and ncclGroupEnd(): for each i,
    //   cudaSetDevice(devices[i]) and ncclCommInitRank(&comm, nranks, id, i). Without the group the
    //   first ncclCommInitRank waits forever for ranks that this same thread has not made yet.
    // - Then for each rank, with its device current: cudaStreamCreateWithFlags(..., cudaStreamNonBlocking).
    // - Any failure: ncclCommAbort each communicator made, destroy each stream made, leave `ranks`
    //   empty and return the failure. Success: `ranks` gets {device, comm, stream} for rank i at index i.
    (void)devices;   // delete this line once you use it
    ranks.clear();
    return ncclInvalidUsage;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    // TODO(2) (lesson 4, sections 4.3 and 4.4): between ncclGroupStart() and ncclGroupEnd(), for each
    // rank i: ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm,
    // ranks[i].stream) - the same pointer twice makes it in place. Return the first failure, and call
    // ncclGroupEnd() on every path. Do not wait for anything: the caller waits later.
    (void)ranks, (void)buffers, (void)count;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    // TODO(3) (lesson 4, section 4.4): a root outside [0, ranks.size()) gives ncclInvalidArgument before
    // anything is queued. Then, in one group as in TODO(2), for each rank i:
    // ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream).
    (void)ranks, (void)buffers, (void)count, (void)root;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    // TODO(4) (lesson 4, section 4.6): slabs[i] is [left halo | interior own elements | right halo].
    // - halo > interior, or slabs.size() != ranks.size(): ncclInvalidArgument. No ranks or halo = 0:
    //   nothing to do.
    // - In one group, for each rank i with left = (i + n - 1) % n and right = (i + 1) % n, on its stream:
    //     send its last `halo` own elements (slab + interior) to `right`;
    //     receive its left halo (slab) from `left`;
    //     send its first `halo` own elements (slab + halo) to `left`;
    //     receive its right halo (slab + halo + interior) from `right`.
    //   Keep that order: with two ranks, left and right are the same peer, and sends and receives
    //   between two ranks pair up in the order they were posted. One rank is its own neighbour.
    (void)ranks, (void)slabs, (void)interior, (void)halo;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    // TODO(5) (lesson 4, section 4.5): queue one training step on every rank, waiting for nothing.
    // - For each rank i, with its device current: produce_gradients<<<blocks_for(gradient_count),
    //   threads_per_block, 0, ranks[i].stream>>>(gradients, gradient_count, i, step), then
    //   cudaGetLastError(). Same stream as the all-reduce: the stream keeps them in order.
    // - One group of ncclAllReduce(gradients, gradients, gradient_count, ncclFloat, ncclAvg, comm,
    //   ranks[i].stream), as in TODO(2).
    // - Then for each rank, with its device current: advance_activations<<<blocks_for(activation_count),
    //   threads_per_block, 0, replicas[i].side_stream>>>(activations, activation_count). On the side
    //   stream it runs while the gradients are averaged. No synchronisation anywhere.
    // - Give the caller's device back (CurrentDeviceGuard).
    (void)ranks, (void)replicas, (void)step;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    // TODO(6) (lesson 4, section 4.7): wait by polling, never by blocking on one stream.
    // Loop until every rank's stream is idle:
    // - for each rank with a communicator, ncclCommGetAsyncError(comm, &error). An error other than
    //   ncclSuccess and ncclInProgress: ncclCommAbort every rank's communicator, set every comm to
    //   nullptr, and return that error;
    // - cudaStreamQuery(rank.stream): cudaErrorNotReady means still busy; another error gives
    //   ncclUnhandledCudaError.
    // Return ncclSuccess once every stream answered cudaSuccess in one pass.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    // TODO(7) (lesson 4, section 4.8): for each rank, with its device current, in this order:
    // cudaStreamSynchronize(stream); if comm is not nullptr (an aborted rank has none), ncclCommFinalize
    // then ncclCommDestroy; cudaStreamDestroy(stream). Keep going after a failure and return the first
    // one. Clear `ranks` and give the caller's device back.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
}
