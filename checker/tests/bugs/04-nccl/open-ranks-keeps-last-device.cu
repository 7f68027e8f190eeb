// open_ranks leaves the last rank's device current when it returns; I only switch back to the
// caller's device on the failure path.
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
    const int n = (int)devices.size();
    if (n == 0) return ncclInvalidArgument;

    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;

    ncclComm_t* comms = new ncclComm_t[n];
    cudaStream_t* streams = new cudaStream_t[n];
    int i = 0;
    while (i < n) {
        comms[i] = nullptr;
        streams[i] = nullptr;
        ++i;
    }

    ncclResult_t res = ncclCommInitAll(comms, n, devices.data());
    i = 0;
    while (res == ncclSuccess && i < n) {
        if (cudaSetDevice(devices[i]) != cudaSuccess) {
            res = ncclUnhandledCudaError;
        } else if (cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking) != cudaSuccess) {
            streams[i] = nullptr;
            res = ncclUnhandledCudaError;
        }
        ++i;
    }

    if (res == ncclSuccess) {
        ranks.resize(n);
        i = 0;
        while (i < n) {
            ranks[i].device = devices[i];
            ranks[i].comm = comms[i];
            ranks[i].stream = streams[i];
            ++i;
        }
    } else {
        i = 0;
        while (i < n) {
            if (streams[i] != nullptr) {
                cudaSetDevice(devices[i]);
                cudaStreamDestroy(streams[i]);
            }
            if (comms[i] != nullptr) ncclCommAbort(comms[i]);
            ++i;
        }
    }
    delete[] comms;
    delete[] streams;
    if (res != ncclSuccess) cudaSetDevice(caller);
    return res;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    const int n = (int)ranks.size();
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    int i = 0;
    while (res == ncclSuccess && i < n) {
        res = ncclAllReduce((const void*)buffers[i], (void*)buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm,
                            ranks[i].stream);
        ++i;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess) res = end;
    return res;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    const int n = (int)ranks.size();
    if (root < 0 || root >= n) return ncclInvalidArgument;
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    int i = 0;
    while (res == ncclSuccess && i < n) {
        res = ncclBroadcast((const void*)buffers[i], (void*)buffers[i], count, ncclInt, root, ranks[i].comm,
                            ranks[i].stream);
        ++i;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess) res = end;
    return res;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = (int)ranks.size();
    ncclResult_t res = ncclGroupStart();
    if (res != ncclSuccess) return res;
    int i = 0;
    while (res == ncclSuccess && i < n) {
        const int left = (i + n - 1) % n;
        const int right = (i + 1) % n;
        float* const s = slabs[i];
        const ncclComm_t c = ranks[i].comm;
        const cudaStream_t st = ranks[i].stream;
        res = ncclSend(s + halo, halo, ncclFloat, left, c, st);
        if (res == ncclSuccess) res = ncclSend(s + interior, halo, ncclFloat, right, c, st);
        if (res == ncclSuccess) res = ncclRecv(s + halo + interior, halo, ncclFloat, right, c, st);
        if (res == ncclSuccess) res = ncclRecv(s, halo, ncclFloat, left, c, st);
        ++i;
    }
    const ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess) res = end;
    return res;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    const int n = (int)ranks.size();
    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) return ncclUnhandledCudaError;

    ncclResult_t res = ncclSuccess;
    int i = 0;
    while (res == ncclSuccess && i < n) {
        const Replica& rp = replicas[i];
        if (cudaSetDevice(ranks[i].device) != cudaSuccess) {
            res = ncclUnhandledCudaError;
            break;
        }
        produce_gradients<<<blocks_for(rp.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rp.gradients, rp.gradient_count, i, step);
        advance_activations<<<blocks_for(rp.activation_count), threads_per_block, 0, rp.side_stream>>>(
            rp.activations, rp.activation_count);
        if (cudaGetLastError() != cudaSuccess) res = ncclUnhandledCudaError;
        ++i;
    }
    if (res == ncclSuccess) {
        res = ncclGroupStart();
        if (res == ncclSuccess) {
            i = 0;
            while (res == ncclSuccess && i < n) {
                res = ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count,
                                    ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
                ++i;
            }
            const ncclResult_t end = ncclGroupEnd();
            if (res == ncclSuccess) res = end;
        }
    }
    cudaSetDevice(caller);
    return res;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    const int n = (int)ranks.size();
    int idle = 0;
    while (idle < n) {
        idle = 0;
        int i = 0;
        while (i < n) {
            if (ranks[i].comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                const ncclResult_t asked = ncclCommGetAsyncError(ranks[i].comm, &state);
                if (asked != ncclSuccess) return asked;
                if (state != ncclSuccess && state != ncclInProgress) {
                    int k = 0;
                    while (k < n) {
                        if (ranks[k].comm != nullptr) ncclCommAbort(ranks[k].comm);
                        ranks[k].comm = nullptr;
                        ++k;
                    }
                    return state;
                }
            }
            const cudaError_t q = cudaStreamQuery(ranks[i].stream);
            if (q == cudaSuccess) ++idle;
            else if (q != cudaErrorNotReady) return ncclUnhandledCudaError;
            ++i;
        }
    }
    return ncclSuccess;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    int caller = -1;
    const bool have_caller = cudaGetDevice(&caller) == cudaSuccess;
    ncclResult_t first = ncclSuccess;
    const int n = (int)ranks.size();
    int i = 0;
    while (i < n) {
        Rank* r = &ranks[i];
        ncclResult_t res = ncclSuccess;
        if (cudaSetDevice(r->device) != cudaSuccess) res = ncclUnhandledCudaError;
        if (r->stream != nullptr && cudaStreamSynchronize(r->stream) != cudaSuccess && res == ncclSuccess)
            res = ncclUnhandledCudaError;
        if (r->comm != nullptr) {
            ncclResult_t f = ncclCommFinalize(r->comm);
            ncclResult_t d = ncclCommDestroy(r->comm);
            if (res == ncclSuccess) res = f;
            if (res == ncclSuccess) res = d;
            r->comm = nullptr;
        }
        if (r->stream != nullptr && cudaStreamDestroy(r->stream) != cudaSuccess && res == ncclSuccess)
            res = ncclUnhandledCudaError;
        r->stream = nullptr;
        if (first == ncclSuccess) first = res;
        ++i;
    }
    ranks.clear();
    if (have_caller) cudaSetDevice(caller);
    return first;
}
