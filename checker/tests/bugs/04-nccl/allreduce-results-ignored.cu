// average_in_place only returns what ncclGroupEnd says; I don't keep the result of each ncclAllReduce
// inside the group.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <thread>

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

namespace {

ncclResult_t cuda_status(cudaError_t e)
{
    return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

// Releases streams and communicators of a half-made job; the caller gives the device back.
void release_partial(std::vector<Rank>& partial)
{
    for (Rank& r : partial) {
        if (r.comm != nullptr) ncclCommAbort(r.comm);
        r.comm = nullptr;
        if (r.stream != nullptr && cudaSetDevice(r.device) == cudaSuccess) cudaStreamDestroy(r.stream);
        r.stream = nullptr;
    }
    partial.clear();
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    int device_count = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDeviceCount(&device_count));
    for (int d : devices)
        if (d < 0 || d >= device_count) return ncclInvalidArgument;

    // Streams first, one per device, then the communicators in one group.
    std::vector<Rank> job(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        job[i].device = devices[i];
        const ncclResult_t made = cuda_status(cudaSetDevice(devices[i]));
        const ncclResult_t stream_made =
            made == ncclSuccess ? cuda_status(cudaStreamCreateWithFlags(&job[i].stream, cudaStreamNonBlocking)) : made;
        if (stream_made != ncclSuccess) {
            job[i].stream = nullptr;
            release_partial(job);
            return stream_made;
        }
    }

    ncclUniqueId id;
    ncclResult_t result = ncclGetUniqueId(&id);
    if (result == ncclSuccess) {
        const int n = static_cast<int>(job.size());
        result = ncclGroupStart();
        if (result == ncclSuccess) {
            for (int r = 0; r < n && result == ncclSuccess; ++r) {
                result = cuda_status(cudaSetDevice(job[r].device));
                if (result == ncclSuccess) result = ncclCommInitRank(&job[r].comm, n, id, r);
            }
            const ncclResult_t ended = ncclGroupEnd();
            if (result == ncclSuccess) result = ended;
        }
    }
    if (result != ncclSuccess) {
        release_partial(job);
        return result;
    }
    ranks = std::move(job);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i) {
        const int left = (i + n - 1) % n, right = (i + 1) % n;
        float* slab = slabs[i];
        const Rank& me = ranks[i];
        // Per peer, in the same order on both sides: the last own elements (a left halo) travel first,
        // the first own elements (a right halo) second.
        result = ncclSend(slab + interior, halo, ncclFloat, right, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclRecv(slab, halo, ncclFloat, left, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclSend(slab + halo, halo, ncclFloat, left, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclRecv(slab + halo + interior, halo, ncclFloat, right, me.comm, me.stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    // The gradients are produced on the side stream; an event carries the order over to the rank's
    // stream, and the activations follow on the side stream, beside the all-reduce.
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        cudaEvent_t produced = nullptr;
        CUDA_RETURN_IF_FAILED(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, rep.side_stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        cudaError_t error = cudaGetLastError();
        if (error == cudaSuccess) error = cudaEventRecord(produced, rep.side_stream);
        if (error == cudaSuccess) error = cudaStreamWaitEvent(ranks[i].stream, produced, 0);
        const cudaError_t destroyed = cudaEventDestroy(produced);   // the queued wait keeps its place
        CUDA_RETURN_IF_FAILED(error);
        CUDA_RETURN_IF_FAILED(destroyed);
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                               ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    std::vector<bool> idle(ranks.size(), false);
    for (;;) {
        std::size_t idle_count = 0;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            if (ranks[i].comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(ranks[i].comm, &state));
                if (state != ncclSuccess && state != ncclInProgress) {
                    for (Rank& r : ranks) {
                        if (r.comm != nullptr) ncclCommAbort(r.comm);
                        r.comm = nullptr;
                    }
                    return state;
                }
            }
            if (!idle[i]) {
                const cudaError_t q = cudaStreamQuery(ranks[i].stream);
                if (q == cudaSuccess) idle[i] = true;
                else if (q != cudaErrorNotReady) return ncclUnhandledCudaError;
            }
            if (idle[i]) ++idle_count;
        }
        if (idle_count == ranks.size()) return ncclSuccess;
        std::this_thread::yield();
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto note = [&first](ncclResult_t r) {
        if (first == ncclSuccess) first = r;
    };
    for (Rank& rank : ranks) {
        note(cuda_status(cudaSetDevice(rank.device)));
        if (rank.stream != nullptr) note(cuda_status(cudaStreamSynchronize(rank.stream)));
        if (rank.comm != nullptr) {
            note(ncclCommFinalize(rank.comm));
            note(ncclCommDestroy(rank.comm));
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) note(cuda_status(cudaStreamDestroy(rank.stream)));
        rank.stream = nullptr;
    }
    ranks.clear();
    return first;
}
