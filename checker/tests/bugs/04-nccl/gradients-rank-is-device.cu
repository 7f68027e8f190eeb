// I pass the rank's device number to produce_gradients as its rank; I took device and rank to be the
// same thing.
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
    const int n = static_cast<int>(devices.size());
    if (n == 0) return ncclInvalidArgument;

    CurrentDeviceGuard guard;
    for (int i = 0; i < n; ++i)
        if (cudaSetDevice(devices[i]) != cudaSuccess) return ncclUnhandledCudaError;

    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess) return res;

    std::vector<ncclComm_t> comms(n, nullptr);
    std::vector<cudaStream_t> streams(n, nullptr);

    res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    for (int i = 0; i < n; ++i) {
        if (cudaSetDevice(devices[i]) != cudaSuccess) {
            res = ncclUnhandledCudaError;
            break;
        }
        res = ncclCommInitRank(&comms[i], n, id, i);
        if (res != ncclSuccess) break;
    }
    ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess) res = end;

    for (int i = 0; i < n && res == ncclSuccess; ++i) {
        if (cudaSetDevice(devices[i]) != cudaSuccess) res = ncclUnhandledCudaError;
        else if (cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking) != cudaSuccess) {
            streams[i] = nullptr;
            res = ncclUnhandledCudaError;
        }
    }

    if (res != ncclSuccess) {
        for (int i = 0; i < n; ++i) {
            if (streams[i] != nullptr) {
                cudaSetDevice(devices[i]);
                cudaStreamDestroy(streams[i]);
            }
            if (comms[i] != nullptr) ncclCommAbort(comms[i]);
        }
        return res;
    }

    ranks.resize(n);
    for (int i = 0; i < n; ++i) {
        ranks[i].device = devices[i];
        ranks[i].comm = comms[i];
        ranks[i].stream = streams[i];
    }
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        res = ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
        if (res != ncclSuccess) break;
    }
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        res = ncclBcast(buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream);   // always in place
        if (res != ncclSuccess) break;
    }
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    for (int i = 0; i < n && res == ncclSuccess; ++i) {
        int l = i == 0 ? n - 1 : i - 1;
        int r = i == n - 1 ? 0 : i + 1;
        ncclComm_t c = ranks[i].comm;
        cudaStream_t s = ranks[i].stream;
        float* b = slabs[i];
        // Send right, then left; receive from the left, then from the right (the peer's sends, in order).
        res = ncclSend(b + interior, halo, ncclFloat, r, c, s);
        if (res == ncclSuccess) res = ncclSend(b + halo, halo, ncclFloat, l, c, s);
        if (res == ncclSuccess) res = ncclRecv(b, halo, ncclFloat, l, c, s);
        if (res == ncclSuccess) res = ncclRecv(b + halo + interior, halo, ncclFloat, r, c, s);
    }
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    const std::size_t n = ranks.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (cudaSetDevice(ranks[i].device) != cudaSuccess) return ncclUnhandledCudaError;
        const Replica& rp = replicas[i];
        produce_gradients<<<blocks_for(rp.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rp.gradients, rp.gradient_count, ranks[i].device, step);
        if (cudaPeekAtLastError() != cudaSuccess) return ncclUnhandledCudaError;
        advance_activations<<<blocks_for(rp.activation_count), threads_per_block, 0, rp.side_stream>>>(
            rp.activations, rp.activation_count);
        if (cudaPeekAtLastError() != cudaSuccess) return ncclUnhandledCudaError;
    }
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    for (std::size_t i = 0; i < n; ++i) {
        res = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                            ncclAvg, ranks[i].comm, ranks[i].stream);
        if (res != ncclSuccess) break;
    }
    ncclResult_t end = ncclGroupEnd();
    return res != ncclSuccess ? res : end;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    const std::size_t n = ranks.size();
    std::vector<bool> done(n, false);
    std::size_t remaining = n;
    while (true) {
        for (std::size_t i = 0; i < n; ++i) {
            if (ranks[i].comm != nullptr) {
                ncclResult_t err = ncclSuccess;
                ncclResult_t res = ncclCommGetAsyncError(ranks[i].comm, &err);
                if (res != ncclSuccess) return res;
                if (err != ncclSuccess && err != ncclInProgress) {
                    for (std::size_t k = 0; k < n; ++k) {
                        if (ranks[k].comm != nullptr) ncclCommAbort(ranks[k].comm);
                        ranks[k].comm = nullptr;
                    }
                    return err;
                }
            }
            if (done[i]) continue;
            cudaError_t q = cudaStreamQuery(ranks[i].stream);
            if (q == cudaSuccess) {
                done[i] = true;
                --remaining;
            } else if (q != cudaErrorNotReady) {
                return ncclUnhandledCudaError;
            }
        }
        if (remaining == 0) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        ncclResult_t res = ncclSuccess;
        if (cudaSetDevice(ranks[i].device) != cudaSuccess) res = ncclUnhandledCudaError;
        if (ranks[i].stream != nullptr && cudaStreamSynchronize(ranks[i].stream) != cudaSuccess &&
            res == ncclSuccess)
            res = ncclUnhandledCudaError;
        if (ranks[i].comm != nullptr) {
            ncclResult_t finalized = ncclCommFinalize(ranks[i].comm);
            if (res == ncclSuccess) res = finalized;
            ncclResult_t destroyed = ncclCommDestroy(ranks[i].comm);
            if (res == ncclSuccess) res = destroyed;
            ranks[i].comm = nullptr;
        }
        if (ranks[i].stream != nullptr && cudaStreamDestroy(ranks[i].stream) != cudaSuccess && res == ncclSuccess)
            res = ncclUnhandledCudaError;
        ranks[i].stream = nullptr;
        if (first == ncclSuccess) first = res;
    }
    ranks.clear();
    return first;
}
