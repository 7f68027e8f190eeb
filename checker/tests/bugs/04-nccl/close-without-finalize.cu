// close_ranks calls ncclCommDestroy directly; I read that destroy finalizes for you.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <cstdio>
#include <set>

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

// Like nccl-tests' macros, but returning the error instead of exiting the program.
#define NCCLCHECK(cmd)                                                                               \
    do {                                                                                             \
        const ncclResult_t r_ = (cmd);                                                               \
        if (r_ != ncclSuccess) {                                                                     \
            std::fprintf(stderr, "%s:%d NCCL failure %d '%s'\n", __FILE__, __LINE__, static_cast<int>(r_), \
                         ncclGetErrorString(r_));                                                    \
            return r_;                                                                               \
        }                                                                                            \
    } while (0)

#define CUDACHECK(cmd)                                                                                    \
    do {                                                                                                  \
        const cudaError_t e_ = (cmd);                                                                     \
        if (e_ != cudaSuccess) {                                                                          \
            std::fprintf(stderr, "%s:%d CUDA failure '%s'\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            return ncclUnhandledCudaError;                                                                \
        }                                                                                                 \
    } while (0)

namespace {

// Runs the body (which returns ncclResult_t) inside one group and closes the group whatever happens.
template <class Body>
ncclResult_t grouped(Body body)
{
    NCCLCHECK(ncclGroupStart());
    const ncclResult_t inner = body();
    const ncclResult_t ended = ncclGroupEnd();
    NCCLCHECK(inner);
    NCCLCHECK(ended);
    return ncclSuccess;
}

ncclResult_t create_streams(const std::vector<int>& devices, std::vector<cudaStream_t>& streams)
{
    for (int device : devices) {
        CUDACHECK(cudaSetDevice(device));
        cudaStream_t stream = nullptr;
        CUDACHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        streams.push_back(stream);
    }
    return ncclSuccess;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
        return ncclInvalidUsage;   // two ranks on one GPU: NCCL would refuse it too
    CurrentDeviceGuard guard;

    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    NCCLCHECK(ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));

    std::vector<cudaStream_t> streams;
    const ncclResult_t made = create_streams(devices, streams);
    if (made != ncclSuccess) {
        for (std::size_t i = 0; i < streams.size(); ++i) {
            cudaSetDevice(devices[i]);
            cudaStreamDestroy(streams[i]);
        }
        for (ncclComm_t comm : comms) ncclCommAbort(comm);
        return made;
    }
    for (std::size_t i = 0; i < devices.size(); ++i) ranks.push_back(Rank{devices[i], comms[i], streams[i]});
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return grouped([&]() -> ncclResult_t {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCLCHECK(ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) {
        std::fprintf(stderr, "broadcast_from_root: root %d is not a rank of %zu\n", root, ranks.size());
        return ncclInvalidArgument;
    }
    return grouped([&]() -> ncclResult_t {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCLCHECK(ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    return grouped([&]() -> ncclResult_t {
        for (int i = 0; i < n; ++i) {
            const Rank& rk = ranks[i];
            float* s = slabs[i];
            const int left = (i + n - 1) % n, right = (i + 1) % n;
            NCCLCHECK(ncclSend(s + halo, halo, ncclFloat, left, rk.comm, rk.stream));
            NCCLCHECK(ncclRecv(s + halo + interior, halo, ncclFloat, right, rk.comm, rk.stream));
            NCCLCHECK(ncclSend(s + interior, halo, ncclFloat, right, rk.comm, rk.stream));
            NCCLCHECK(ncclRecv(s, halo, ncclFloat, left, rk.comm, rk.stream));
        }
        return ncclSuccess;
    });
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Replica& rep = replicas[i];
        CUDACHECK(cudaSetDevice(ranks[i].device));
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        CUDACHECK(cudaGetLastError());
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        CUDACHECK(cudaGetLastError());
    }
    return grouped([&]() -> ncclResult_t {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCLCHECK(ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count,
                                    ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        int busy = 0;
        for (Rank& rank : ranks) {
            if (rank.comm != nullptr) {
                ncclResult_t async = ncclSuccess;
                NCCLCHECK(ncclCommGetAsyncError(rank.comm, &async));
                if (async != ncclSuccess && async != ncclInProgress) {
                    std::fprintf(stderr, "rank on device %d failed: %s; aborting every communicator\n", rank.device,
                                 ncclGetErrorString(async));
                    for (Rank& each : ranks) {
                        if (each.comm != nullptr) ncclCommAbort(each.comm);
                        each.comm = nullptr;
                    }
                    return async;
                }
            }
            const cudaError_t state = cudaStreamQuery(rank.stream);
            if (state == cudaErrorNotReady) {
                ++busy;
                continue;
            }
            CUDACHECK(state);
        }
        if (busy == 0) return ncclSuccess;
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto note = [&first](ncclResult_t r, const char* what) {
        if (r == ncclSuccess) return;
        std::fprintf(stderr, "close_ranks: %s failed: %s\n", what, ncclGetErrorString(r));
        if (first == ncclSuccess) first = r;
    };
    auto cuda = [](cudaError_t e) { return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError; };
    for (Rank& rank : ranks) {
        note(cuda(cudaSetDevice(rank.device)), "cudaSetDevice");
        if (rank.stream) note(cuda(cudaStreamSynchronize(rank.stream)), "cudaStreamSynchronize");
        if (rank.comm) {
            note(ncclCommDestroy(rank.comm), "ncclCommDestroy");
            rank.comm = nullptr;
        }
        if (rank.stream) note(cuda(cudaStreamDestroy(rank.stream)), "cudaStreamDestroy");
        rank.stream = nullptr;
    }
    ranks.clear();
    return first;
}
