// I take the first own elements from slab[0] and the last from interior - halo, forgetting that the
// own elements start after the left halo.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <algorithm>
#include <iterator>
#include <numeric>
#include <functional>

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

ncclResult_t from_cuda(cudaError_t e)
{
    return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

// Calls op(i) for every rank index inside one group; stops at the first failure but always ends the group.
ncclResult_t in_group(std::size_t n, const std::function<ncclResult_t(std::size_t)>& op)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    ncclResult_t result = ncclSuccess;
    std::find_if(order.begin(), order.end(), [&](std::size_t i) { return (result = op(i)) != ncclSuccess; });
    const ncclResult_t ended = ncclGroupEnd();
    return result != ncclSuccess ? result : ended;
}

bool not_ready(cudaError_t e)
{
    return e == cudaErrorNotReady;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    std::vector<int> sorted(devices);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return ncclInvalidUsage;
    if (std::any_of(devices.begin(), devices.end(), [](int d) { return cudaSetDevice(d) != cudaSuccess; }))
        return ncclUnhandledCudaError;

    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    NCCL_RETURN_IF_FAILED(ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devices.data()));

    std::vector<cudaStream_t> streams;
    const bool all_made = std::all_of(devices.begin(), devices.end(), [&streams](int device) {
        cudaStream_t s = nullptr;
        if (cudaSetDevice(device) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
            return false;
        streams.push_back(s);
        return true;
    });
    if (!all_made) {
        for (std::size_t i = 0; i < streams.size(); ++i) {
            cudaSetDevice(devices[i]);
            cudaStreamDestroy(streams[i]);
        }
        std::for_each(comms.begin(), comms.end(), [](ncclComm_t c) { ncclCommAbort(c); });
        return ncclUnhandledCudaError;
    }

    ranks.reserve(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) ranks.push_back(Rank{devices[i], comms[i], streams[i]});
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return in_group(ranks.size(), [&](std::size_t i) {
        return ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    return in_group(ranks.size(), [&](std::size_t i) {
        return ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const std::size_t n = ranks.size();
    return in_group(n, [&](std::size_t i) -> ncclResult_t {
        const int left = static_cast<int>((i + n - 1) % n);
        const int right = static_cast<int>((i + 1) % n);
        const Rank& rank = ranks[i];
        float* slab = slabs[i];
        // Towards the right first on both sides: my last own elements go right, and from the left comes
        // that neighbour's last; then the other direction.
        NCCL_RETURN_IF_FAILED(ncclSend(slab + interior - halo, halo, ncclFloat, right, rank.comm, rank.stream));
        NCCL_RETURN_IF_FAILED(ncclRecv(slab, halo, ncclFloat, left, rank.comm, rank.stream));
        NCCL_RETURN_IF_FAILED(ncclSend(slab, halo, ncclFloat, left, rank.comm, rank.stream));
        return ncclRecv(slab + halo + interior, halo, ncclFloat, right, rank.comm, rank.stream);
    });
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    {
        CurrentDeviceGuard guard;
        std::vector<ncclResult_t> launched(ranks.size(), ncclSuccess);
        std::transform(ranks.begin(), ranks.end(), replicas.begin(), launched.begin(),
                       [&, index = 0](const Rank& rank, const Replica& rep) mutable -> ncclResult_t {
                           const int me = index++;
                           NCCL_RETURN_IF_FAILED(from_cuda(cudaSetDevice(rank.device)));
                           produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, rank.stream>>>(
                               rep.gradients, rep.gradient_count, me, step);
                           advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0,
                                                 rep.side_stream>>>(rep.activations, rep.activation_count);
                           return from_cuda(cudaGetLastError());
                       });
        const auto bad = std::find_if(launched.begin(), launched.end(), [](ncclResult_t r) { return r != ncclSuccess; });
        if (bad != launched.end()) return *bad;
    }
    return in_group(ranks.size(), [&](std::size_t i) {
        return ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                             ncclAvg, ranks[i].comm, ranks[i].stream);
    });
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        ncclResult_t failure = ncclSuccess;
        std::find_if(ranks.begin(), ranks.end(), [&failure](const Rank& rank) {
            if (rank.comm == nullptr) return false;
            ncclResult_t state = ncclSuccess;
            const ncclResult_t asked = ncclCommGetAsyncError(rank.comm, &state);
            failure = asked != ncclSuccess ? asked : state == ncclInProgress ? ncclSuccess : state;
            return failure != ncclSuccess;
        });
        if (failure != ncclSuccess) {
            std::for_each(ranks.begin(), ranks.end(), [](Rank& rank) {
                if (rank.comm != nullptr) ncclCommAbort(rank.comm);
                rank.comm = nullptr;
            });
            return failure;
        }
        std::vector<cudaError_t> states(ranks.size());
        std::transform(ranks.begin(), ranks.end(), states.begin(),
                       [](const Rank& rank) { return cudaStreamQuery(rank.stream); });
        if (std::any_of(states.begin(), states.end(), [](cudaError_t e) { return e != cudaSuccess && !not_ready(e); }))
            return ncclUnhandledCudaError;
        if (std::none_of(states.begin(), states.end(), not_ready)) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    std::vector<ncclResult_t> outcomes;
    std::for_each(ranks.begin(), ranks.end(), [&outcomes](Rank& rank) {
        outcomes.push_back(from_cuda(cudaSetDevice(rank.device)));
        if (rank.stream != nullptr) outcomes.push_back(from_cuda(cudaStreamSynchronize(rank.stream)));
        if (rank.comm != nullptr) {
            outcomes.push_back(ncclCommFinalize(rank.comm));
            outcomes.push_back(ncclCommDestroy(rank.comm));
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) outcomes.push_back(from_cuda(cudaStreamDestroy(rank.stream)));
        rank.stream = nullptr;
    });
    ranks.clear();
    const auto first = std::find_if(outcomes.begin(), outcomes.end(), [](ncclResult_t r) { return r != ncclSuccess; });
    return first == outcomes.end() ? ncclSuccess : *first;
}
