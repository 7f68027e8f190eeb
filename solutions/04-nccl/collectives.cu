// Lesson 4, multi-GPU with NCCL: the reference solution of collectives.h.
// Generated from checker/lessons/04-nccl/master/collectives.master.cu by tools/lessons/make-exercise;
// edit the master, not this file.
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

constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// Given: the gradients of one rank for one step. Each rank computes different values, so an
// average that leaves a rank out, or sums instead of averaging, shows in every element.
__global__ void produce_gradients(float* gradients, std::size_t n, int rank, int step)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        gradients[i] = static_cast<float>(static_cast<int>(i % 61) + 7 * rank + step) * 0.5f;
}

// Given: work that needs none of the gradients (the next layer's activations, say).
__global__ void advance_activations(float* activations, std::size_t n)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        activations[i] = 0.5f * activations[i] + 1.0f;
}

// Ends whatever a failed open_ranks made. A half-made job is aborted, not finalized: its ranks may
// never have met, and a finalize would wait for them.
void discard(std::vector<Rank>& made)
{
    for (Rank& rank : made) {
        if (rank.comm != nullptr) ncclCommAbort(rank.comm);
        if (rank.stream != nullptr && cudaSetDevice(rank.device) == cudaSuccess) cudaStreamDestroy(rank.stream);
    }
    made.clear();
}

// Every rank's communicator aborted: after an asynchronous error none of them can be trusted, and
// abort is the one call that ends a communicator whose operations will never finish.
void abort_all(std::vector<Rank>& ranks)
{
    for (Rank& rank : ranks) {
        if (rank.comm != nullptr) ncclCommAbort(rank.comm);
        rank.comm = nullptr;
    }
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    int device_count = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    for (int device : devices)
        if (device < 0 || device >= device_count) return ncclInvalidArgument;
    CurrentDeviceGuard restore_current_device;

    const int nranks = static_cast<int>(devices.size());
    std::vector<Rank> made(devices.size());
    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));
    // Each ncclCommInitRank waits until every rank of the id has joined, so one thread can make them
    // all only inside a group: nothing starts before ncclGroupEnd, which joins them together.
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (int i = 0; i < nranks; ++i) {
        made[static_cast<std::size_t>(i)].device = devices[static_cast<std::size_t>(i)];
        // A communicator belongs to the device that is current when it is made.
        if (status == ncclSuccess && cudaSetDevice(devices[static_cast<std::size_t>(i)]) != cudaSuccess)
            status = ncclUnhandledCudaError;
        if (status == ncclSuccess) status = ncclCommInitRank(&made[static_cast<std::size_t>(i)].comm, nranks, id, i);
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (status == ncclSuccess) status = ended;

    for (Rank& rank : made) {
        if (status != ncclSuccess) break;
        // The stream belongs to the rank's device too; non-blocking, so that work on the legacy
        // default stream never serialises with it.
        if (cudaSetDevice(rank.device) != cudaSuccess ||
            cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking) != cudaSuccess)
            status = ncclUnhandledCudaError;
    }
    if (status != ncclSuccess) {
        discard(made);
        return status;
    }
    ranks = std::move(made);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    if (buffers.size() != ranks.size()) return ncclInvalidArgument;
    // One thread posts every rank's part: each part waits for the others, so all of them go into one
    // group and are launched together by ncclGroupEnd. Nothing inside the group may wait.
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && status == ncclSuccess; ++i)
        status = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    // The group is closed on every path: an open group would swallow the caller's next NCCL calls.
    const ncclResult_t ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (buffers.size() != ranks.size()) return ncclInvalidArgument;
    // Checked before the group: a bad root on one rank only would leave the others waiting.
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && status == ncclSuccess; ++i)
        status = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    if (slabs.size() != ranks.size() || halo > interior) return ncclInvalidArgument;
    const int n = static_cast<int>(ranks.size());
    if (n == 0 || halo == 0) return ncclSuccess;
    // Every send waits for its receive, and one thread posts both ends: one group for all of them.
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (int i = 0; i < n && status == ncclSuccess; ++i) {
        const Rank& rank = ranks[static_cast<std::size_t>(i)];
        float* slab = slabs[static_cast<std::size_t>(i)];
        const int left = (i + n - 1) % n;
        const int right = (i + 1) % n;
        // Sends and receives between two ranks pair up in the order they were posted. With two ranks the
        // left and the right neighbour are the same rank, so the order matters: each rank first sends
        // its last elements rightwards and receives its left halo, then sends its first elements
        // leftwards and receives its right halo. A single rank sends to itself the same way.
        status = ncclSend(slab + interior, halo, ncclFloat, right, rank.comm, rank.stream);
        if (status == ncclSuccess) status = ncclRecv(slab, halo, ncclFloat, left, rank.comm, rank.stream);
        if (status == ncclSuccess) status = ncclSend(slab + halo, halo, ncclFloat, left, rank.comm, rank.stream);
        if (status == ncclSuccess)
            status = ncclRecv(slab + halo + interior, halo, ncclFloat, right, rank.comm, rank.stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    if (replicas.size() != ranks.size()) return ncclInvalidArgument;
    CurrentDeviceGuard restore_current_device;
    // The gradients are made on the rank's own stream: the all-reduce queued after them on the same
    // stream cannot start before the kernel has finished.
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& replica = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(replica.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            replica.gradients, replica.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && status == ncclSuccess; ++i)
        status = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                               ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    if (status != ncclSuccess) return status;
    NCCL_RETURN_IF_FAILED(ended);
    // The independent work goes to the side stream after the all-reduce is queued, and the host waits
    // for nothing: each GPU runs it while its gradients are being averaged.
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& replica = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        advance_activations<<<blocks_for(replica.activation_count), threads_per_block, 0, replica.side_stream>>>(
            replica.activations, replica.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    return ncclSuccess;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        bool all_idle = true;
        for (Rank& rank : ranks) {
            if (rank.comm != nullptr) {
                ncclResult_t async_error = ncclSuccess;
                NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(rank.comm, &async_error));
                // A failed operation never finishes on the GPU: waiting for its stream would hang.
                if (async_error != ncclSuccess && async_error != ncclInProgress) {
                    abort_all(ranks);
                    return async_error;
                }
            }
            const cudaError_t state = cudaStreamQuery(rank.stream);
            if (state == cudaErrorNotReady) all_idle = false;
            else if (state != cudaSuccess) return ncclUnhandledCudaError;
        }
        if (all_idle) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard restore_current_device;
    ncclResult_t first_failure = ncclSuccess;
    const auto keep_first = [&first_failure](ncclResult_t result) {
        if (first_failure == ncclSuccess) first_failure = result;
    };
    const auto keep_first_cuda = [&keep_first](cudaError_t status) {
        if (status != cudaSuccess) keep_first(ncclUnhandledCudaError);
    };
    for (Rank& rank : ranks) {
        keep_first_cuda(cudaSetDevice(rank.device));
        // The rank's queued work finishes before anything it uses goes away.
        if (rank.stream != nullptr) keep_first_cuda(cudaStreamSynchronize(rank.stream));
        if (rank.comm != nullptr) {
            // Finalize completes the communicator's own work; destroy then frees it.
            keep_first(ncclCommFinalize(rank.comm));
            keep_first(ncclCommDestroy(rank.comm));
        }
        if (rank.stream != nullptr) keep_first_cuda(cudaStreamDestroy(rank.stream));
    }
    ranks.clear();
    return first_failure;
}
