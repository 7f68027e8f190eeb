// average_in_place passes the buffer size in bytes (count * sizeof(float)) as the all-reduce count,
// the way I would for cudaMemcpy.
#include "collectives.h"

#include <cstddef>
#include <thread>
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

[[maybe_unused]] constexpr unsigned blocks_for(std::size_t n)
{
    const std::size_t wanted = (n + threads_per_block - 1) / threads_per_block;
    return wanted == 0 ? 1u : wanted < max_blocks ? static_cast<unsigned>(wanted) : max_blocks;
}

[[maybe_unused]] __global__ void produce_gradients(float* gradients, std::size_t n, int rank, int step)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        gradients[i] = static_cast<float>(static_cast<int>(i % 61) + 7 * rank + step) * 0.5f;
}

[[maybe_unused]] __global__ void advance_activations(float* activations, std::size_t n)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        activations[i] = 0.5f * activations[i] + 1.0f;
}

// Section 4.2, as given: rank i on devices[i], all made by this one thread. On failure nothing is left behind.
ncclResult_t init_ranks(const std::vector<int>& devices, std::vector<ncclComm_t>& comms)
{
    comms.clear();
    if (devices.empty()) return ncclInvalidArgument;
    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;
    for (int device : devices)                       // check first: a rank that never joins blocks the rest
        if (cudaSetDevice(device) != cudaSuccess) {
            cudaSetDevice(caller);
            return ncclUnhandledCudaError;
        }
    ncclUniqueId id;
    ncclResult_t result = ncclGetUniqueId(&id);      // a fresh id for this communicator
    const int n = static_cast<int>(devices.size());
    comms.assign(devices.size(), nullptr);
    if (result == ncclSuccess) result = ncclGroupStart();
    if (result == ncclSuccess) {
        for (int rank = 0; rank < n && result == ncclSuccess; ++rank) {
            if (cudaSetDevice(devices[rank]) != cudaSuccess) result = ncclUnhandledCudaError;
            else result = ncclCommInitRank(&comms[rank], n, id, rank);   // returns at once in a group
        }
        const ncclResult_t ended = ncclGroupEnd();   // close the group on every path; waits for all ranks
        if (result == ncclSuccess) result = ended;
    }
    if (result != ncclSuccess) {
        for (ncclComm_t comm : comms)
            if (comm != nullptr) ncclCommAbort(comm);   // a half-made communicator is aborted, not destroyed
        comms.clear();
    }
    cudaSetDevice(caller);                           // give the caller their device back
    return result;
}

// Section 4.7, as given.
ncclResult_t make_stream(int device, cudaStream_t* stream)
{
    int caller = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDevice(&caller));
    CUDA_RETURN_IF_FAILED(cudaSetDevice(device));
    const cudaError_t made = cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
    CUDA_RETURN_IF_FAILED(cudaSetDevice(caller));   // give the device back before any return that follows
    CUDA_RETURN_IF_FAILED(made);
    return ncclSuccess;
}

// Section 4.8, as given: ends one rank; returns the first failure but still releases what it can.
ncclResult_t close_one(int device, ncclComm_t& comm, cudaStream_t& stream)
{
    ncclResult_t first = ncclSuccess;
    auto keep = [&first](ncclResult_t result) { if (first == ncclSuccess) first = result; };
    if (cudaSetDevice(device) != cudaSuccess) keep(ncclUnhandledCudaError);
    if (stream != nullptr && cudaStreamSynchronize(stream) != cudaSuccess) keep(ncclUnhandledCudaError);
    if (comm != nullptr) {   // nullptr: aborted already, nothing to destroy
        keep(ncclCommFinalize(comm));
        keep(ncclCommDestroy(comm));
        comm = nullptr;
    }
    if (stream != nullptr && cudaStreamDestroy(stream) != cudaSuccess) keep(ncclUnhandledCudaError);
    stream = nullptr;
    return first;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    CurrentDeviceGuard guard;
    std::vector<ncclComm_t> comms;
    NCCL_RETURN_IF_FAILED(init_ranks(devices, comms));

    std::vector<cudaStream_t> streams;
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < devices.size() && result == ncclSuccess; ++i) {
        cudaStream_t stream = nullptr;
        result = make_stream(devices[i], &stream);
        if (result == ncclSuccess) streams.push_back(stream);
    }
    if (result != ncclSuccess) {
        for (std::size_t i = 0; i < streams.size(); ++i) {
            cudaSetDevice(devices[i]);
            cudaStreamDestroy(streams[i]);
        }
        for (ncclComm_t comm : comms) ncclCommAbort(comm);
        return result;
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
        Rank rank;
        rank.device = devices[i];
        rank.comm = comms[i];
        rank.stream = streams[i];
        ranks.push_back(rank);
    }
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    // Section 4.3's sum_across_ranks, with ncclAvg and the same buffer twice.
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclAllReduce(buffers[i], buffers[i], count * sizeof(float), ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();   // always close a group you opened
    return result != ncclSuccess ? result : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;   // before the group
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    // Section 4.6's shift_along_ring, with the four calls of the table. Per peer the order agrees:
    // first the first own elements (to left), then the last (to right); first the right halo, then the left.
    const int n = static_cast<int>(ranks.size());
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (int r = 0; r < n && result == ncclSuccess; ++r) {
        const int left = (r - 1 + n) % n, right = (r + 1) % n;
        float* slab = slabs[r];
        ncclComm_t comm = ranks[r].comm;
        cudaStream_t stream = ranks[r].stream;
        result = ncclSend(slab + halo, halo, ncclFloat, left, comm, stream);
        if (result == ncclSuccess) result = ncclSend(slab + interior, halo, ncclFloat, right, comm, stream);
        if (result == ncclSuccess) result = ncclRecv(slab + halo + interior, halo, ncclFloat, right, comm, stream);
        if (result == ncclSuccess) result = ncclRecv(slab, halo, ncclFloat, left, comm, stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    // Section 4.5's produce_then_sum, with the producer on the rank's own stream (no event needed).
    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;
    ncclResult_t result = ncclSuccess;
    for (std::size_t r = 0; r < ranks.size() && result == ncclSuccess; ++r) {   // 1. producers first
        const Replica& w = replicas[r];
        if (cudaSetDevice(ranks[r].device) != cudaSuccess) { result = ncclUnhandledCudaError; break; }
        produce_gradients<<<blocks_for(w.gradient_count), threads_per_block, 0, ranks[r].stream>>>(
            w.gradients, w.gradient_count, static_cast<int>(r), step);
        if (cudaGetLastError() != cudaSuccess) { result = ncclUnhandledCudaError; break; }
        advance_activations<<<blocks_for(w.activation_count), threads_per_block, 0, w.side_stream>>>(
            w.activations, w.activation_count);
        if (cudaGetLastError() != cudaSuccess) result = ncclUnhandledCudaError;
    }
    if (result == ncclSuccess) result = ncclGroupStart();
    if (result == ncclSuccess) {                                                 // 2. the collectives
        for (std::size_t r = 0; r < ranks.size(); ++r)
            if (result == ncclSuccess)
                result = ncclAllReduce(replicas[r].gradients, replicas[r].gradients, replicas[r].gradient_count,
                                       ncclFloat, ncclAvg, ranks[r].comm, ranks[r].stream);
        const ncclResult_t ended = ncclGroupEnd();
        if (result == ncclSuccess) result = ended;
    }
    cudaSetDevice(caller);
    return result;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    // Section 4.7's wait_for_one, turned into one loop over all ranks.
    for (;;) {
        bool all_idle = true;
        for (Rank& rank : ranks) {
            if (rank.comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                const ncclResult_t asked = ncclCommGetAsyncError(rank.comm, &state);
                if (asked != ncclSuccess) return asked;
                if (state != ncclSuccess && state != ncclInProgress) {
                    for (Rank& other : ranks)
                        if (other.comm != nullptr) {
                            ncclCommAbort(other.comm);   // its work is cancelled; the comm must not be used again
                            other.comm = nullptr;
                        }
                    return state;
                }
            }
            const cudaError_t query = cudaStreamQuery(rank.stream);
            if (query == cudaErrorNotReady) all_idle = false;
            else if (query != cudaSuccess) return ncclUnhandledCudaError;
        }
        if (all_idle) return ncclSuccess;
        std::this_thread::yield();   // let the GPUs (and other threads) get on
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (Rank& rank : ranks) {
        const ncclResult_t closed = close_one(rank.device, rank.comm, rank.stream);
        if (first == ncclSuccess) first = closed;
    }
    ranks.clear();
    return first;
}
