// My 1/n factor for the PreMulSum average is computed as 1 / n with n the size_t rank count, so it is
// 0 as soon as there are two ranks.
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

// One in-place all-reduce per rank of factor * sum, in one group, with a PreMulSum op per communicator.
ncclResult_t scaled_sum_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                                 std::size_t count, float factor)
{
    std::vector<ncclRedOp_t> ops;
    ops.reserve(ranks.size());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i) {
        ncclRedOp_t op;
        result = ncclRedOpCreatePreMulSum(&op, &factor, ncclFloat, ncclScalarHostImmediate, ranks[i].comm);
        if (result == ncclSuccess) ops.push_back(op);
    }
    if (result == ncclSuccess) {
        result = ncclGroupStart();
        if (result == ncclSuccess) {
            for (std::size_t i = 0; i < ranks.size() && result == ncclSuccess; ++i)
                result = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ops[i], ranks[i].comm, ranks[i].stream);
            const ncclResult_t ended = ncclGroupEnd();
            if (result == ncclSuccess) result = ended;
        }
    }
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const ncclResult_t destroyed = ncclRedOpDestroy(ops[i], ranks[i].comm);
        if (result == ncclSuccess) result = destroyed;
    }
    return result;
}

float one_over(std::size_t n)
{
    return n == 0 ? 1.0f : static_cast<float>(1 / n);
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    int visible = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDeviceCount(&visible));
    for (int d : devices)
        if (d < 0 || d >= visible) return ncclInvalidArgument;

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));

    const int n = static_cast<int>(devices.size());
    std::vector<Rank> pending(devices.size());
    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess) {
        for (int r = 0; r < n && result == ncclSuccess; ++r) {
            pending[r].device = devices[r];
            if (cudaSetDevice(devices[r]) != cudaSuccess) result = ncclUnhandledCudaError;
            else result = ncclCommInitRank(&pending[r].comm, n, id, r);
        }
        const ncclResult_t ended = ncclGroupEnd();
        if (result == ncclSuccess) result = ended;
    }
    for (int r = 0; r < n && result == ncclSuccess; ++r) {
        if (cudaSetDevice(devices[r]) != cudaSuccess ||
            cudaStreamCreateWithFlags(&pending[r].stream, cudaStreamNonBlocking) != cudaSuccess) {
            pending[r].stream = nullptr;
            result = ncclUnhandledCudaError;
        }
    }
    if (result != ncclSuccess) {
        for (Rank& p : pending) {
            if (p.stream != nullptr && cudaSetDevice(p.device) == cudaSuccess) cudaStreamDestroy(p.stream);
            if (p.comm != nullptr) ncclCommAbort(p.comm);
        }
        return result;
    }
    ranks = std::move(pending);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return scaled_sum_in_place(ranks, buffers, count, one_over(ranks.size()));
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    const int n = static_cast<int>(ranks.size());
    if (!(0 <= root && root < n)) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i)
        result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    return result == ncclSuccess ? ended : result;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < n && result == ncclSuccess; ++i) {
        const int to_left = (i + n - 1) % n;
        const int to_right = (i + 1) % n;
        float* first_own = slabs[i] + halo;
        float* last_own = slabs[i] + interior;   // halo + interior - halo
        float* left_halo = slabs[i];
        float* right_halo = slabs[i] + halo + interior;
        result = ncclSend(first_own, halo, ncclFloat, to_left, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclSend(last_own, halo, ncclFloat, to_right, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclRecv(right_halo, halo, ncclFloat, to_right, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclRecv(left_halo, halo, ncclFloat, to_left, ranks[i].comm, ranks[i].stream);
    }
    const ncclResult_t ended = ncclGroupEnd();
    return result == ncclSuccess ? ended : result;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    {
        CurrentDeviceGuard guard;
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
            produce_gradients<<<blocks_for(replicas[i].gradient_count), threads_per_block, 0, ranks[i].stream>>>(
                replicas[i].gradients, replicas[i].gradient_count, static_cast<int>(i), step);
            advance_activations<<<blocks_for(replicas[i].activation_count), threads_per_block, 0,
                                  replicas[i].side_stream>>>(replicas[i].activations, replicas[i].activation_count);
            CUDA_RETURN_IF_FAILED(cudaGetLastError());
        }
    }
    std::vector<float*> gradients;
    for (const Replica& r : replicas) gradients.push_back(r.gradients);
    const std::size_t count = replicas.empty() ? 0 : replicas.front().gradient_count;
    return scaled_sum_in_place(ranks, gradients, count, one_over(ranks.size()));
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        ncclResult_t failure = ncclSuccess;
        bool pending = false;
        for (const Rank& rank : ranks) {
            if (rank.comm != nullptr && failure == ncclSuccess) {
                ncclResult_t state = ncclSuccess;
                const ncclResult_t asked = ncclCommGetAsyncError(rank.comm, &state);
                if (asked != ncclSuccess) failure = asked;
                else if (state != ncclSuccess && state != ncclInProgress) failure = state;
            }
            const cudaError_t q = cudaStreamQuery(rank.stream);
            if (q == cudaErrorNotReady) pending = true;
            else if (q != cudaSuccess && failure == ncclSuccess) failure = ncclUnhandledCudaError;
        }
        if (failure != ncclSuccess) {
            for (Rank& rank : ranks)
                if (rank.comm != nullptr) {
                    ncclCommAbort(rank.comm);
                    rank.comm = nullptr;
                }
            return failure;
        }
        if (!pending) return ncclSuccess;
        std::this_thread::yield();
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (Rank& rank : ranks) {
        ncclResult_t steps[4] = {ncclSuccess, ncclSuccess, ncclSuccess, ncclSuccess};
        if (cudaSetDevice(rank.device) != cudaSuccess ||
            (rank.stream != nullptr && cudaStreamSynchronize(rank.stream) != cudaSuccess))
            steps[0] = ncclUnhandledCudaError;
        if (rank.comm != nullptr) {
            steps[1] = ncclCommFinalize(rank.comm);
            steps[2] = ncclCommDestroy(rank.comm);
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr && cudaStreamDestroy(rank.stream) != cudaSuccess) steps[3] = ncclUnhandledCudaError;
        rank.stream = nullptr;
        for (ncclResult_t s : steps)
            if (first == ncclSuccess) first = s;
    }
    ranks.clear();
    return first;
}
