// When open_ranks fails I destroy the streams I made, but I don't abort the communicators: I thought
// a failed init leaves nothing to free.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <chrono>
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

// One conversion for both kinds of result, so that a single TRY macro serves CUDA and NCCL calls.
inline ncclResult_t as_nccl(ncclResult_t r) { return r; }
inline ncclResult_t as_nccl(cudaError_t e) { return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError; }

#define TRY(call)                                               \
    do {                                                        \
        const ncclResult_t try_status_ = as_nccl(call);         \
        if (try_status_ != ncclSuccess) return try_status_;     \
    } while (0)

// Keeps the first failure of a sequence of calls that must all be made.
#define KEEP(first, call)                                       \
    do {                                                        \
        const ncclResult_t keep_status_ = as_nccl(call);        \
        if ((first) == ncclSuccess) (first) = keep_status_;     \
    } while (0)

// Starts a group, runs body(i) for i = 0 .. n-1 until one fails, ends the group on every path.
template <class Body>
ncclResult_t each_in_group(std::size_t n, Body&& body)
{
    TRY(ncclGroupStart());
    ncclResult_t status = ncclSuccess;
    for (std::size_t i = 0; i < n && status == ncclSuccess; ++i) status = body(i);
    KEEP(status, ncclGroupEnd());
    return status;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    int present = 0;
    TRY(cudaGetDeviceCount(&present));
    for (int d : devices)
        if (d < 0 || d >= present) return ncclInvalidArgument;

    ncclUniqueId id;
    TRY(ncclGetUniqueId(&id));
    std::vector<Rank> job(devices.size());
    const int n = static_cast<int>(devices.size());
    ncclResult_t status = each_in_group(job.size(), [&](std::size_t r) -> ncclResult_t {
        job[r].device = devices[r];
        TRY(cudaSetDevice(job[r].device));
        return ncclCommInitRank(&job[r].comm, n, id, static_cast<int>(r));
    });
    for (std::size_t r = 0; r < job.size() && status == ncclSuccess; ++r) {
        KEEP(status, cudaSetDevice(job[r].device));
        if (status == ncclSuccess) KEEP(status, cudaStreamCreateWithFlags(&job[r].stream, cudaStreamNonBlocking));
        if (status != ncclSuccess) job[r].stream = nullptr;
    }
    if (status != ncclSuccess) {
        for (Rank& r : job) {
            if (r.stream != nullptr && cudaSetDevice(r.device) == cudaSuccess) cudaStreamDestroy(r.stream);
        }
        return status;
    }
    ranks.swap(job);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return each_in_group(ranks.size(), [&](std::size_t i) {
        return ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || static_cast<std::size_t>(root) >= ranks.size()) return ncclInvalidArgument;
    return each_in_group(ranks.size(), [&](std::size_t i) {
        return ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const std::size_t n = ranks.size();
    return each_in_group(n, [&](std::size_t i) -> ncclResult_t {
        const int left = static_cast<int>((i + n - 1) % n);
        const int right = static_cast<int>((i + 1) % n);
        const ncclComm_t comm = ranks[i].comm;
        const cudaStream_t stream = ranks[i].stream;
        float* slab = slabs[i];
        // First own elements go left and fill that neighbour's right halo, so the right halo is received first.
        TRY(ncclSend(slab + halo, halo, ncclFloat, left, comm, stream));
        TRY(ncclRecv(slab + halo + interior, halo, ncclFloat, right, comm, stream));
        TRY(ncclSend(slab + interior, halo, ncclFloat, right, comm, stream));
        return ncclRecv(slab, halo, ncclFloat, left, comm, stream);
    });
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        TRY(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        TRY(cudaGetLastError());
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        TRY(cudaSetDevice(ranks[i].device));
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        TRY(cudaGetLastError());
    }
    return each_in_group(ranks.size(), [&](std::size_t i) {
        return ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                             ncclAvg, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    using namespace std::chrono_literals;
    for (;;) {
        ncclResult_t failed = ncclSuccess;
        std::size_t busy = 0;
        for (const Rank& rank : ranks) {
            if (rank.comm != nullptr && failed == ncclSuccess) {
                ncclResult_t state = ncclSuccess;
                TRY(ncclCommGetAsyncError(rank.comm, &state));
                if (state != ncclSuccess && state != ncclInProgress) failed = state;
            }
            const cudaError_t q = cudaStreamQuery(rank.stream);
            if (q == cudaErrorNotReady) ++busy;
            else if (failed == ncclSuccess) TRY(q);
        }
        if (failed != ncclSuccess) {
            for (Rank& rank : ranks)
                if (rank.comm != nullptr) {
                    ncclCommAbort(rank.comm);
                    rank.comm = nullptr;
                }
            return failed;
        }
        if (busy == 0) return ncclSuccess;
        std::this_thread::sleep_for(20us);
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    // Last rank first; each rank in the order 4.8 gives.
    for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) {
        Rank& rank = *it;
        KEEP(first, cudaSetDevice(rank.device));
        if (rank.stream != nullptr) KEEP(first, cudaStreamSynchronize(rank.stream));
        if (rank.comm != nullptr) {
            KEEP(first, ncclCommFinalize(rank.comm));
            KEEP(first, ncclCommDestroy(rank.comm));
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) KEEP(first, cudaStreamDestroy(rank.stream));
        rank.stream = nullptr;
    }
    ranks.clear();
    return first;
}
