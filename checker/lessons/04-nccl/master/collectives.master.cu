#ifdef SOLUTION
// Lesson 4, multi-GPU with NCCL: the reference solution of collectives.h.
// Generated from checker/lessons/04-nccl/master/collectives.master.cu by tools/lessons/make-exercise;
// edit the master, not this file.
#else
// Lesson 4, multi-GPU with NCCL: write the bodies marked TODO(1) to TODO(7).
// Each TODO says what to write and names the section of lessons/04-nccl/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 4 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
//   tools/mgpu run 4     builds this file with main.cu and shows what works so far
//   tools/mgpu check 4   grades it on several simulated machines
// Every body compiles as given and returns ncclInvalidUsage until you write it.
#endif
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

#ifdef SOLUTION
constexpr unsigned blocks_for(std::size_t n)
#else
// [[maybe_unused]] on the given helpers keeps the compiler quiet until your code uses them.
[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
#endif
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

// Given: the gradients of one rank for one step. Each rank computes different values, so an
// average that leaves a rank out, or sums instead of averaging, shows in every element.
#ifdef SOLUTION
__global__ void produce_gradients(float* gradients, std::size_t n, int rank, int step)
#else
[[maybe_unused]] __global__ void produce_gradients(float* gradients, std::size_t n, int rank, int step)
#endif
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        gradients[i] = static_cast<float>(static_cast<int>(i % 61) + 7 * rank + step) * 0.5f;
}

// Given: work that needs none of the gradients (the next layer's activations, say).
#ifdef SOLUTION
__global__ void advance_activations(float* activations, std::size_t n)
#else
[[maybe_unused]] __global__ void advance_activations(float* activations, std::size_t n)
#endif
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        activations[i] = 0.5f * activations[i] + 1.0f;
}

#ifdef SOLUTION
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
#endif

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
#ifdef SOLUTION
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
#else
    // TODO(1) (lesson 4, section 4.2; contract: Task 1 in collectives.h): one rank per device
    // (communicator and stream), all made from this thread, nothing left behind on failure.
    (void)devices;   // delete this line once you use it
    ranks.clear();
    return ncclInvalidUsage;
#endif
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
#ifdef SOLUTION
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
#else
    // TODO(2) (lesson 4, sections 4.3 and 4.4; contract: Task 2 in collectives.h): queue the
    // in-place average of every rank's buffer, waiting for nothing.
    (void)ranks, (void)buffers, (void)count;   // delete this line once you use them
    return ncclInvalidUsage;
#endif
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
#ifdef SOLUTION
    if (buffers.size() != ranks.size()) return ncclInvalidArgument;
    // Checked before the group: a bad root on one rank only would leave the others waiting.
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && status == ncclSuccess; ++i)
        status = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
#else
    // TODO(3) (lesson 4, section 4.4; contract: Task 3 in collectives.h): queue a broadcast of the
    // root's buffer to every rank; a root that is not a rank is refused first.
    (void)ranks, (void)buffers, (void)count, (void)root;   // delete this line once you use them
    return ncclInvalidUsage;
#endif
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
#ifdef SOLUTION
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
#else
    // TODO(4) (lesson 4, section 4.6; contract: Task 4 in collectives.h): every rank's halos filled
    // from its neighbours on a ring, with the layout the header describes.
    (void)ranks, (void)slabs, (void)interior, (void)halo;   // delete this line once you use them
    return ncclInvalidUsage;
#endif
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
#ifdef SOLUTION
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
#else
    // TODO(5) (lesson 4, section 4.5; contract: Task 5 in collectives.h): queue one training step
    // on every rank, so that the activations advance while the gradients are averaged; nothing
    // waits.
    (void)ranks, (void)replicas, (void)step;   // delete this line once you use them
    return ncclInvalidUsage;
#endif
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
#ifdef SOLUTION
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
#else
    // TODO(6) (lesson 4, section 4.7; contract: Task 6 in collectives.h): wait until every rank's
    // stream is idle, or abort every communicator on the first asynchronous error.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
#endif
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
#ifdef SOLUTION
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
#else
    // TODO(7) (lesson 4, section 4.8; contract: Task 7 in collectives.h): release every rank in the
    // order NCCL requires, going on after failures, and return the first one.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
#endif
}
