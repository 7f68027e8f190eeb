// I launch both kernels on the side stream (it is the compute stream) and the all-reduce on the rank's
// stream; nothing makes the all-reduce wait for the gradients.
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
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    for (int device : devices) CUDA_RETURN_IF_FAILED(cudaSetDevice(device));

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));
    const int n = static_cast<int>(devices.size());

    std::vector<Rank> fresh(devices.size());
    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess) {
        int r = 0;
        for (; r < n; ++r) {
            fresh[r].device = devices[r];
            if (cudaSetDevice(fresh[r].device) != cudaSuccess) {
                result = ncclUnhandledCudaError;
                break;
            }
            result = ncclCommInitRank(&fresh[r].comm, n, id, r);
            if (result != ncclSuccess) break;
        }
        const ncclResult_t ended = ncclGroupEnd();
        if (result == ncclSuccess) result = ended;
    }
    for (Rank& rank : fresh) {
        if (result != ncclSuccess) break;
        if (cudaSetDevice(rank.device) != cudaSuccess ||
            cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking) != cudaSuccess) {
            rank.stream = nullptr;
            result = ncclUnhandledCudaError;
        }
    }
    if (result == ncclSuccess) {
        ranks = std::move(fresh);
        return ncclSuccess;
    }
    for (Rank& rank : fresh) {
        if (rank.stream != nullptr && cudaSetDevice(rank.device) == cudaSuccess) cudaStreamDestroy(rank.stream);
        if (rank.comm != nullptr) ncclCommAbort(rank.comm);
    }
    return result;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    if (buffers.size() != ranks.size()) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());   // may be nested inside a caller's group
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    if (buffers.size() != ranks.size()) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

namespace {

// One rank's four calls, in their own group; only the caller's outermost group launches them.
ncclResult_t post_halo_calls(const Rank& rank, float* slab, int left, int right, std::size_t interior, std::size_t halo)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSend(slab + halo, halo, ncclFloat, left, rank.comm, rank.stream);
    if (result == ncclSuccess) result = ncclSend(slab + interior, halo, ncclFloat, right, rank.comm, rank.stream);
    if (result == ncclSuccess) result = ncclRecv(slab + halo + interior, halo, ncclFloat, right, rank.comm, rank.stream);
    if (result == ncclSuccess) result = ncclRecv(slab, halo, ncclFloat, left, rank.comm, rank.stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

}  // namespace

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    if (slabs.size() != ranks.size() || halo > interior) return ncclInvalidArgument;
    const int n = static_cast<int>(ranks.size());
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i)
        result = post_halo_calls(ranks[i], slabs[i], (i + n - 1) % n, (i + 1) % n, interior, halo);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    if (replicas.size() != ranks.size()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    std::vector<float*> gradients;
    gradients.reserve(replicas.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, rep.side_stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
        gradients.push_back(rep.gradients);
    }
    // Every replica has the same gradient_count: one all-reduce needs the same count on every rank.
    return average_in_place(ranks, gradients, replicas.empty() ? 0 : replicas[0].gradient_count);
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        bool running = false;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            ncclResult_t state = ncclSuccess;
            if (ranks[i].comm != nullptr) NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(ranks[i].comm, &state));
            if (state != ncclSuccess && state != ncclInProgress) {
                for (Rank& r : ranks) {
                    if (r.comm != nullptr) ncclCommAbort(r.comm);
                    r.comm = nullptr;
                }
                return state;
            }
            const cudaError_t q = cudaStreamQuery(ranks[i].stream);
            if (q != cudaSuccess && q != cudaErrorNotReady) return ncclUnhandledCudaError;
            running = running || q == cudaErrorNotReady;
        }
        if (!running) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (Rank& rank : ranks) {
        ncclResult_t r = ncclSuccess;
        if (cudaSetDevice(rank.device) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
            r = ncclUnhandledCudaError;   // everything queued on the rank's device is done
        if (rank.comm != nullptr) {
            const ncclResult_t finalized = ncclCommFinalize(rank.comm);
            const ncclResult_t destroyed = ncclCommDestroy(rank.comm);
            if (r == ncclSuccess) r = finalized;
            if (r == ncclSuccess) r = destroyed;
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) {
            if (cudaSetDevice(rank.device) != cudaSuccess || cudaStreamDestroy(rank.stream) != cudaSuccess)
                if (r == ncclSuccess) r = ncclUnhandledCudaError;
            rank.stream = nullptr;
        }
        if (first == ncclSuccess) first = r;
    }
    ranks.clear();
    return first;
}
