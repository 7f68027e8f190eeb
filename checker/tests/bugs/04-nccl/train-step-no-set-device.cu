// train_step launches the kernels without cudaSetDevice; each launch names the rank's stream and I
// thought the stream picks the device.
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

ncclResult_t cuda_ok(cudaError_t e)
{
    return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

// Section 4.2's check: rank i of n, on devices[i].
ncclResult_t verify(const std::vector<ncclComm_t>& comms, const std::vector<int>& devices)
{
    for (std::size_t i = 0; i < comms.size(); ++i) {
        int size = 0, device = -1, rank = -1;
        NCCL_RETURN_IF_FAILED(ncclCommCount(comms[i], &size));
        NCCL_RETURN_IF_FAILED(ncclCommCuDevice(comms[i], &device));
        NCCL_RETURN_IF_FAILED(ncclCommUserRank(comms[i], &rank));
        if (size != static_cast<int>(comms.size()) || device != devices[i] || rank != static_cast<int>(i))
            return ncclInternalError;
    }
    return ncclSuccess;
}

// Marks the current end of a rank's stream with an event made on that rank's device.
ncclResult_t mark_end(const Rank& rank, cudaEvent_t* event)
{
    *event = nullptr;
    NCCL_RETURN_IF_FAILED(cuda_ok(cudaSetDevice(rank.device)));
    NCCL_RETURN_IF_FAILED(cuda_ok(cudaEventCreateWithFlags(event, cudaEventDisableTiming)));
    if (cudaEventRecord(*event, rank.stream) != cudaSuccess) {
        cudaEventDestroy(*event);
        *event = nullptr;
        return ncclUnhandledCudaError;
    }
    return ncclSuccess;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    const int n = static_cast<int>(devices.size());
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    NCCL_RETURN_IF_FAILED(ncclCommInitAll(comms.data(), n, devices.data()));

    std::vector<Rank> built;
    ncclResult_t result = verify(comms, devices);
    for (int i = 0; i < n && result == ncclSuccess; ++i) {
        Rank rank;
        rank.device = devices[i];
        rank.comm = comms[i];
        result = cuda_ok(cudaSetDevice(rank.device));
        if (result == ncclSuccess) result = cuda_ok(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
        if (result == ncclSuccess) built.push_back(rank);
    }
    if (result != ncclSuccess) {
        for (const Rank& rank : built) {
            cudaSetDevice(rank.device);
            cudaStreamDestroy(rank.stream);
        }
        for (ncclComm_t comm : comms) ncclCommAbort(comm);
        return result;
    }
    ranks = std::move(built);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    std::size_t i = 0;
    while (result == ncclSuccess && i < ranks.size()) {
        result = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
        ++i;
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    std::size_t i = 0;
    while (result == ncclSuccess && i < ranks.size()) {
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
        ++i;
    }
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
        const int left = (i + n - 1) % n;
        const int right = (i + 1) % n;
        const Rank& me = ranks[i];
        // All receives first, then all sends; per peer: right halo before left halo, first own before last own.
        result = ncclRecv(slabs[i] + halo + interior, halo, ncclFloat, right, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclRecv(slabs[i], halo, ncclFloat, left, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclSend(slabs[i] + halo, halo, ncclFloat, left, me.comm, me.stream);
        if (result == ncclSuccess) result = ncclSend(slabs[i] + interior, halo, ncclFloat, right, me.comm, me.stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
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
    CurrentDeviceGuard guard;
    std::vector<cudaEvent_t> ends(ranks.size(), nullptr);
    auto release = [&] {
        for (std::size_t i = 0; i < ends.size(); ++i)
            if (ends[i] != nullptr) {
                cudaSetDevice(ranks[i].device);
                cudaEventDestroy(ends[i]);
            }
    };
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const ncclResult_t marked = mark_end(ranks[i], &ends[i]);
        if (marked != ncclSuccess) {
            release();
            return marked;
        }
    }
    ncclResult_t outcome = ncclSuccess;
    for (bool waiting = true; waiting;) {
        waiting = false;
        for (std::size_t i = 0; i < ranks.size() && outcome == ncclSuccess; ++i) {
            if (ranks[i].comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                outcome = ncclCommGetAsyncError(ranks[i].comm, &state);
                if (outcome == ncclSuccess && state != ncclSuccess && state != ncclInProgress) outcome = state;
                if (outcome != ncclSuccess) break;
            }
            const cudaError_t q = cudaEventQuery(ends[i]);
            if (q == cudaErrorNotReady) waiting = true;
            else if (q != cudaSuccess) outcome = ncclUnhandledCudaError;
        }
        if (outcome != ncclSuccess) {
            for (Rank& rank : ranks)
                if (rank.comm != nullptr) {
                    ncclCommAbort(rank.comm);
                    rank.comm = nullptr;
                }
            break;
        }
    }
    release();
    return outcome;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto keep = [&first](ncclResult_t r) {
        if (first == ncclSuccess) first = r;
    };
    for (Rank& rank : ranks) {
        if (rank.stream != nullptr) {
            cudaEvent_t done = nullptr;
            const ncclResult_t marked = mark_end(rank, &done);
            keep(marked);
            if (marked == ncclSuccess) {
                keep(cuda_ok(cudaEventSynchronize(done)));
                keep(cuda_ok(cudaEventDestroy(done)));
            }
        } else {
            keep(cuda_ok(cudaSetDevice(rank.device)));
        }
        if (rank.comm != nullptr) {
            keep(ncclCommFinalize(rank.comm));
            keep(ncclCommDestroy(rank.comm));
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) {
            keep(cuda_ok(cudaSetDevice(rank.device)));
            keep(cuda_ok(cudaStreamDestroy(rank.stream)));
            rank.stream = nullptr;
        }
    }
    ranks.clear();
    return first;
}
