// My divide-by-n kernel after the sums goes on the default stream; I assumed the default stream waits
// for everything else on the device, the NCCL stream included.
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

// Divides every element by the number of ranks: the second half of "sum, then divide".
__global__ void divide_by(float* data, std::size_t n, float ranks)
{
    const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] = data[i] / ranks;
}

// In-place sums of buffers[i] (count[i] floats) over every rank, all in one group, then on each rank's
// stream, after the sum, the division by the number of ranks. Queued only.
ncclResult_t sum_then_divide(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                             const std::vector<std::size_t>& counts)
{
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        result = ncclAllReduce(buffers[i], buffers[i], counts[i], ncclFloat, ncclSum, ranks[i].comm, ranks[i].stream);
        if (result != ncclSuccess) break;
    }
    const ncclResult_t ended = ncclGroupEnd();
    if (result == ncclSuccess) result = ended;
    if (result != ncclSuccess) return result;

    // The consumers go after ncclGroupEnd(), on the same streams, so they run after the sums.
    CurrentDeviceGuard guard;
    const float n = static_cast<float>(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (counts[i] == 0) continue;
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        divide_by<<<blocks_for(counts[i]), threads_per_block>>>(buffers[i], counts[i], n);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    return ncclSuccess;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    for (int device : devices) CUDA_RETURN_IF_FAILED(cudaSetDevice(device));   // ncclUnhandledCudaError if absent

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));
    const int n = static_cast<int>(devices.size());
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    std::vector<cudaStream_t> streams(devices.size(), nullptr);

    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess) {
        for (int r = 0; r < n; ++r) {
            if (cudaSetDevice(devices[r]) != cudaSuccess) {
                result = ncclUnhandledCudaError;
                break;
            }
            result = ncclCommInitRank(&comms[r], n, id, r);
            if (result != ncclSuccess) break;
        }
        const ncclResult_t ended = ncclGroupEnd();
        if (result == ncclSuccess) result = ended;
    }
    for (int r = 0; r < n && result == ncclSuccess; ++r) {
        if (cudaSetDevice(devices[r]) != cudaSuccess ||
            cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking) != cudaSuccess) {
            streams[r] = nullptr;
            result = ncclUnhandledCudaError;
        }
    }
    if (result != ncclSuccess) {
        for (int r = 0; r < n; ++r) {
            if (streams[r] != nullptr) {
                cudaSetDevice(devices[r]);
                cudaStreamDestroy(streams[r]);
            }
            if (comms[r] != nullptr) ncclCommAbort(comms[r]);
        }
        return result;
    }
    ranks.resize(devices.size());
    for (int r = 0; r < n; ++r) ranks[r] = Rank{devices[r], comms[r], streams[r]};
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return sum_then_divide(ranks, buffers, std::vector<std::size_t>(ranks.size(), count));
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
        if (result != ncclSuccess) break;
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    ncclResult_t result = ncclGroupStart();
    if (result != ncclSuccess) return result;
    for (int i = 0; i < n; ++i) {
        const int left = (i + n - 1) % n, right = (i + 1) % n;
        float* left_halo = slabs[i];
        float* first_own = slabs[i] + halo;
        float* last_own = slabs[i] + interior;
        float* right_halo = slabs[i] + halo + interior;
        // Both receives first (left halo, then right), then both sends in the order the peers expect:
        // my right neighbour takes its left halo first, my left neighbour its left halo first too.
        result = ncclRecv(left_halo, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclRecv(right_halo, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclSend(last_own, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclSend(first_own, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
        if (result != ncclSuccess) break;
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    std::vector<float*> gradients(replicas.size());
    std::vector<std::size_t> counts(replicas.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
        gradients[i] = rep.gradients;
        counts[i] = rep.gradient_count;
    }
    return sum_then_divide(ranks, gradients, counts);
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        bool all_done = true;
        for (Rank& rank : ranks) {
            ncclResult_t state = ncclSuccess;
            if (rank.comm != nullptr) {
                const ncclResult_t asked = ncclCommGetAsyncError(rank.comm, &state);
                if (asked != ncclSuccess) return asked;
            }
            if (state != ncclSuccess && state != ncclInProgress) {
                for (Rank& each : ranks) {
                    if (each.comm == nullptr) continue;
                    ncclCommAbort(each.comm);
                    each.comm = nullptr;
                }
                return state;
            }
            const cudaError_t query = cudaStreamQuery(rank.stream);
            if (query == cudaErrorNotReady) all_done = false;
            else if (query != cudaSuccess) return ncclUnhandledCudaError;
        }
        if (all_done) return ncclSuccess;
        std::this_thread::yield();
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (Rank& rank : ranks) {
        ncclResult_t results[5] = {ncclSuccess, ncclSuccess, ncclSuccess, ncclSuccess, ncclSuccess};
        if (cudaSetDevice(rank.device) != cudaSuccess) results[0] = ncclUnhandledCudaError;
        if (rank.stream != nullptr && cudaStreamSynchronize(rank.stream) != cudaSuccess)
            results[1] = ncclUnhandledCudaError;
        if (rank.comm != nullptr) {
            results[2] = ncclCommFinalize(rank.comm);
            results[3] = ncclCommDestroy(rank.comm);
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr && cudaStreamDestroy(rank.stream) != cudaSuccess)
            results[4] = ncclUnhandledCudaError;
        rank.stream = nullptr;
        for (ncclResult_t r : results)
            if (first == ncclSuccess) first = r;
    }
    ranks.clear();
    return first;
}
