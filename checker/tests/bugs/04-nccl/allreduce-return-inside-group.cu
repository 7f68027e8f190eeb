// In average_in_place I check each ncclAllReduce with the return macro inside the group, so a failing
// call returns without ever reaching ncclGroupEnd.
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

namespace {

// Releases what open_ranks made so far; used only on its failure paths.
void discard(std::vector<ncclComm_t>& comms, std::vector<cudaStream_t>& streams, const std::vector<int>& devices)
{
    for (std::size_t i = 0; i < streams.size(); ++i) {
        if (streams[i] == nullptr) continue;
        cudaSetDevice(devices[i]);
        cudaStreamDestroy(streams[i]);
    }
    for (ncclComm_t comm : comms)
        if (comm != nullptr) ncclCommAbort(comm);
    comms.clear();
    streams.clear();
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    int available = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDeviceCount(&available));
    for (int device : devices)
        if (device < 0 || device >= available) return ncclInvalidArgument;

    const int n = static_cast<int>(devices.size());
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    const ncclResult_t made = ncclCommInitAll(comms.data(), n, devices.data());
    if (made != ncclSuccess) {
        std::vector<cudaStream_t> none;
        discard(comms, none, devices);
        return made;
    }

    std::vector<cudaStream_t> streams(devices.size(), nullptr);
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (cudaSetDevice(devices[i]) != cudaSuccess ||
            cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking) != cudaSuccess) {
            streams[i] = nullptr;
            discard(comms, streams, devices);
            return ncclUnhandledCudaError;
        }
    }

    ranks.resize(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        ranks[i].device = devices[i];
        ranks[i].comm = comms[i];
        ranks[i].stream = streams[i];
    }
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    if (count == 0) return ncclSuccess;   // nothing to do, on any rank
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        NCCL_RETURN_IF_FAILED(
            ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || static_cast<std::size_t>(root) >= ranks.size()) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
        if (result != ncclSuccess) break;
    }
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    if (halo == 0 || ranks.empty()) return ncclSuccess;   // nothing to move
    const int n = static_cast<int>(ranks.size());
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i) {
        const int left = (i - 1 + n) % n;
        const int right = (i + 1) % n;
        float* slab = slabs[static_cast<std::size_t>(i)];
        const Rank& rank = ranks[static_cast<std::size_t>(i)];
        // Sends: first own elements go left, then last own elements go right.
        // Receives in the matching order: the right halo first (the peer's first send), then the left.
        result = ncclSend(slab + halo, halo, ncclFloat, left, rank.comm, rank.stream);
        if (result == ncclSuccess) result = ncclSend(slab + interior, halo, ncclFloat, right, rank.comm, rank.stream);
        if (result == ncclSuccess)
            result = ncclRecv(slab + halo + interior, halo, ncclFloat, right, rank.comm, rank.stream);
        if (result == ncclSuccess) result = ncclRecv(slab, halo, ncclFloat, left, rank.comm, rank.stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& replica = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(replica.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            replica.gradients, replica.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
        advance_activations<<<blocks_for(replica.activation_count), threads_per_block, 0, replica.side_stream>>>(
            replica.activations, replica.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                               ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        // First every communicator's asynchronous error ...
        for (const Rank& rank : ranks) {
            if (rank.comm == nullptr) continue;
            ncclResult_t state = ncclSuccess;
            NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(rank.comm, &state));
            if (state == ncclSuccess || state == ncclInProgress) continue;
            for (Rank& victim : ranks) {
                if (victim.comm != nullptr) ncclCommAbort(victim.comm);
                victim.comm = nullptr;
            }
            return state;
        }
        // ... then every stream.
        std::size_t idle = 0;
        for (const Rank& rank : ranks) {
            const cudaError_t query = cudaStreamQuery(rank.stream);
            if (query == cudaSuccess) ++idle;
            else if (query != cudaErrorNotReady) return ncclUnhandledCudaError;
        }
        if (idle == ranks.size()) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (Rank& rank : ranks) {
        ncclResult_t result = ncclSuccess;
        if (cudaSetDevice(rank.device) != cudaSuccess) result = ncclUnhandledCudaError;
        if (rank.stream != nullptr && cudaStreamSynchronize(rank.stream) != cudaSuccess && result == ncclSuccess)
            result = ncclUnhandledCudaError;
        if (rank.comm != nullptr) {
            const ncclResult_t finalized = ncclCommFinalize(rank.comm);
            const ncclResult_t destroyed = ncclCommDestroy(rank.comm);
            if (result == ncclSuccess) result = finalized != ncclSuccess ? finalized : destroyed;
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr && cudaStreamDestroy(rank.stream) != cudaSuccess && result == ncclSuccess)
            result = ncclUnhandledCudaError;
        rank.stream = nullptr;
        if (first == ncclSuccess) first = result;
    }
    ranks.clear();
    return first;
}
