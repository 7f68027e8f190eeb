// My halo exchange posts every rank's sends, then every rank's receives, with no group; I thought two
// separate passes would avoid the deadlock.
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

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    int count = 0;
    CUDA_RETURN_IF_FAILED(cudaGetDeviceCount(&count));
    for (int d : devices)
        if (d < 0 || d >= count) return ncclInvalidArgument;

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));

    const int nranks = static_cast<int>(devices.size());
    std::vector<Rank> out(devices.size());
    for (int r = 0; r < nranks; ++r) out[r].device = devices[r];

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 1;   // this lesson's communicators are blocking

    ncclResult_t result = ncclGroupStart();
    if (result == ncclSuccess) {
        for (Rank& r : out) {
            if (cudaSetDevice(r.device) != cudaSuccess) {
                result = ncclUnhandledCudaError;
                break;
            }
            const int my_rank = static_cast<int>(&r - out.data());
            result = ncclCommInitRankConfig(&r.comm, nranks, id, my_rank, &config);
            if (result != ncclSuccess) break;
        }
        const ncclResult_t ended = ncclGroupEnd();
        if (result == ncclSuccess) result = ended;
    }
    if (result == ncclSuccess) {
        for (Rank& r : out) {
            if (cudaSetDevice(r.device) != cudaSuccess ||
                cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking) != cudaSuccess) {
                r.stream = nullptr;
                result = ncclUnhandledCudaError;
                break;
            }
        }
    }
    if (result != ncclSuccess) {
        for (Rank& r : out) {
            if (r.stream != nullptr) {
                cudaSetDevice(r.device);
                cudaStreamDestroy(r.stream);
            }
            if (r.comm != nullptr) ncclCommAbort(r.comm);
        }
        return result;
    }
    ranks.swap(out);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        if (result == ncclSuccess)
            result = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        if (result == ncclSuccess)
            result = ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    if (halo == 0) return ncclSuccess;
    const std::size_t n = ranks.size();
    ncclResult_t result = ncclSuccess;
    // Two passes over the ranks: first every rank's pair of sends, then every rank's pair of receives.
    for (std::size_t i = 0; i < n && result == ncclSuccess; ++i) {
        const int left = static_cast<int>((i + n - 1) % n), right = static_cast<int>((i + 1) % n);
        result = ncclSend(slabs[i] + halo, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess)
            result = ncclSend(slabs[i] + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
    }
    for (std::size_t i = 0; i < n && result == ncclSuccess; ++i) {
        const int left = static_cast<int>((i + n - 1) % n), right = static_cast<int>((i + 1) % n);
        result = ncclRecv(slabs[i] + halo + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream);
        if (result == ncclSuccess) result = ncclRecv(slabs[i], halo, ncclFloat, left, ranks[i].comm, ranks[i].stream);
    }
    return result;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    // Producers on every rank's own stream first ...
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        produce_gradients<<<blocks_for(replicas[i].gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            replicas[i].gradients, replicas[i].gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    // ... then the side work, which needs none of the gradients ...
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        advance_activations<<<blocks_for(replicas[i].activation_count), threads_per_block, 0,
                              replicas[i].side_stream>>>(replicas[i].activations, replicas[i].activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    // ... and the averages, in one group.
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    ncclResult_t result = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        if (result == ncclSuccess)
            result = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count,
                                   ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    const ncclResult_t ended = ncclGroupEnd();
    NCCL_RETURN_IF_FAILED(result);
    return ended;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    for (;;) {
        bool everyone_idle = true;
        for (Rank& rank : ranks) {
            CUDA_RETURN_IF_FAILED(cudaSetDevice(rank.device));
            ncclResult_t async = ncclSuccess;
            if (rank.comm != nullptr) NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(rank.comm, &async));
            if (async != ncclSuccess && async != ncclInProgress) {
                for (Rank& r : ranks) {
                    if (r.comm == nullptr) continue;
                    ncclCommAbort(r.comm);
                    r.comm = nullptr;
                }
                return async;
            }
            const cudaError_t query = cudaStreamQuery(rank.stream);
            if (query == cudaErrorNotReady) {
                everyone_idle = false;
            } else if (query != cudaSuccess) {
                return ncclUnhandledCudaError;
            }
        }
        if (everyone_idle) break;
        std::this_thread::yield();
    }
    return ncclSuccess;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto keep = [&first](ncclResult_t r) {
        if (first == ncclSuccess) first = r;
    };
    auto keep_cuda = [&keep](cudaError_t e) { keep(e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError); };

    // 1. every rank's queued work is finished
    for (Rank& rank : ranks) {
        if (rank.stream == nullptr) continue;
        keep_cuda(cudaSetDevice(rank.device));
        keep_cuda(cudaStreamSynchronize(rank.stream));
    }
    // 2. every communicator that is left is finalized ...
    for (Rank& rank : ranks)
        if (rank.comm != nullptr) keep(ncclCommFinalize(rank.comm));
    // 3. ... and destroyed
    for (Rank& rank : ranks) {
        if (rank.comm != nullptr) keep(ncclCommDestroy(rank.comm));
        rank.comm = nullptr;
    }
    // 4. the streams go last
    for (Rank& rank : ranks) {
        if (rank.stream == nullptr) continue;
        keep_cuda(cudaSetDevice(rank.device));
        keep_cuda(cudaStreamDestroy(rank.stream));
        rank.stream = nullptr;
    }
    ranks.clear();
    return first;
}
