// In my wait loop `busy` is assigned from each rank's cudaStreamQuery in turn, so only the last rank's
// stream decides when the loop ends.
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
    ncclResult_t status = ncclSuccess;
    ncclResult_t ended = ncclSuccess;
    ncclUniqueId id;
    std::vector<Rank> made;
    int caller = -1;
    int nranks = 0;
    bool caller_known = false;

    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    nranks = static_cast<int>(devices.size());
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;
    caller_known = true;

    // Every device must be selectable before any rank joins.
    for (int d = 0; d < nranks; ++d) {
        if (cudaSetDevice(devices[d]) != cudaSuccess) {
            cudaGetLastError();
            status = ncclUnhandledCudaError;
            goto out;
        }
    }

    status = ncclGetUniqueId(&id);
    if (status != ncclSuccess) goto out;

    made.resize(devices.size());
    status = ncclGroupStart();
    if (status != ncclSuccess) goto out;
    for (int r = 0; r < nranks; ++r) {
        made[r].device = devices[r];
        if (cudaSetDevice(devices[r]) != cudaSuccess) {
            status = ncclUnhandledCudaError;
            break;
        }
        status = ncclCommInitRank(&made[r].comm, nranks, id, r);
        if (status != ncclSuccess) break;
    }
    ended = ncclGroupEnd();
    if (status == ncclSuccess) status = ended;
    if (status != ncclSuccess) goto undo;

    for (int r = 0; r < nranks; ++r) {
        if (cudaSetDevice(devices[r]) != cudaSuccess ||
            cudaStreamCreateWithFlags(&made[r].stream, cudaStreamNonBlocking) != cudaSuccess) {
            made[r].stream = nullptr;
            status = ncclUnhandledCudaError;
            goto undo;
        }
    }
    ranks.swap(made);
    goto out;

undo:
    for (Rank& r : made) {
        if (r.stream != nullptr) {
            cudaSetDevice(r.device);
            cudaStreamDestroy(r.stream);
            r.stream = nullptr;
        }
        if (r.comm != nullptr) {
            ncclCommAbort(r.comm);
            r.comm = nullptr;
        }
    }
    made.clear();
out:
    if (caller_known) cudaSetDevice(caller);
    return status;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    ncclResult_t status = ncclGroupStart();
    ncclResult_t ended = ncclSuccess;
    if (status != ncclSuccess) return status;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        status = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
    }
close_group:
    ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    ncclResult_t status = ncclSuccess;
    ncclResult_t ended = ncclSuccess;
    const int n = static_cast<int>(ranks.size());
    if (root < 0 || root >= n) return ncclInvalidArgument;

    status = ncclGroupStart();
    if (status != ncclSuccess) return status;
    for (int i = 0; i < n; ++i) {
        status = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
    }
close_group:
    ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    ncclResult_t status = ncclGroupStart();
    ncclResult_t ended = ncclSuccess;
    if (status != ncclSuccess) return status;
    for (int i = 0; i < n; ++i) {
        const int left = (i + n - 1) % n;
        const int right = (i + 1) % n;
        float* const slab = slabs[i];
        // Receives first: each rank takes its left halo first, then its right halo ...
        status = ncclRecv(slab, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
        status = ncclRecv(slab + halo + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
        // ... so each rank sends its last own elements (a right neighbour's left halo) first.
        status = ncclSend(slab + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
        status = ncclSend(slab + halo, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) goto close_group;
    }
close_group:
    ended = ncclGroupEnd();
    return status != ncclSuccess ? status : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    ncclResult_t status = ncclSuccess;
    ncclResult_t ended = ncclSuccess;
    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;

    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        if (cudaSetDevice(ranks[i].device) != cudaSuccess) {
            status = ncclUnhandledCudaError;
            goto out;
        }
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        if (cudaGetLastError() != cudaSuccess) {
            status = ncclUnhandledCudaError;
            goto out;
        }
    }

    status = ncclGroupStart();
    if (status != ncclSuccess) goto out;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        status = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                               ncclAvg, ranks[i].comm, ranks[i].stream);
        if (status != ncclSuccess) break;
    }
    ended = ncclGroupEnd();
    if (status == ncclSuccess) status = ended;
out:
    cudaSetDevice(caller);
    return status;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    ncclResult_t failure = ncclSuccess;
    bool busy = true;
    while (busy) {
        busy = false;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            if (ranks[i].comm != nullptr) {
                ncclResult_t async_state = ncclSuccess;
                const ncclResult_t asked = ncclCommGetAsyncError(ranks[i].comm, &async_state);
                if (asked != ncclSuccess) {
                    failure = asked;
                    goto abort_all;
                }
                if (async_state != ncclSuccess && async_state != ncclInProgress) {
                    failure = async_state;
                    goto abort_all;
                }
            }
            const cudaError_t q = cudaStreamQuery(ranks[i].stream);
            busy = q == cudaErrorNotReady;   // still running?
            if (q != cudaSuccess && q != cudaErrorNotReady) {
                failure = ncclUnhandledCudaError;
                goto abort_all;
            }
        }
    }
    return ncclSuccess;

abort_all:
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (ranks[i].comm != nullptr) ncclCommAbort(ranks[i].comm);
        ranks[i].comm = nullptr;
    }
    return failure;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    ncclResult_t first = ncclSuccess;
    ncclResult_t r = ncclSuccess;
    int caller = -1;
    const bool caller_known = cudaGetDevice(&caller) == cudaSuccess;

    for (std::size_t i = 0; i < ranks.size(); ++i) {
        Rank& rank = ranks[i];
        if (cudaSetDevice(rank.device) != cudaSuccess && first == ncclSuccess) first = ncclUnhandledCudaError;
        if (rank.stream != nullptr && cudaStreamSynchronize(rank.stream) != cudaSuccess && first == ncclSuccess)
            first = ncclUnhandledCudaError;
        if (rank.comm == nullptr) goto stream_only;
        r = ncclCommFinalize(rank.comm);
        if (r != ncclSuccess && first == ncclSuccess) first = r;
        r = ncclCommDestroy(rank.comm);
        if (r != ncclSuccess && first == ncclSuccess) first = r;
        rank.comm = nullptr;
    stream_only:
        if (rank.stream != nullptr && cudaStreamDestroy(rank.stream) != cudaSuccess && first == ncclSuccess)
            first = ncclUnhandledCudaError;
        rank.stream = nullptr;
    }
    ranks.clear();
    if (caller_known) cudaSetDevice(caller);
    return first;
}
