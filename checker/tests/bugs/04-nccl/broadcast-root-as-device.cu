// For the broadcast I give NCCL the root's device number (ranks[root].device) instead of the index,
// since NCCL has to know which GPU sends.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <functional>
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

ncclResult_t cuda_result(cudaError_t e)
{
    return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

// Makes each device current in turn and calls fn(index, device); stops at the first failure.
// The caller's device is current again afterwards.
ncclResult_t for_each_device(const std::vector<int>& devices, const std::function<ncclResult_t(std::size_t, int)>& fn)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        NCCL_RETURN_IF_FAILED(cuda_result(cudaSetDevice(devices[i])));
        NCCL_RETURN_IF_FAILED(fn(i, devices[i]));
    }
    return ncclSuccess;
}

std::vector<int> devices_of(const std::vector<Rank>& ranks)
{
    std::vector<int> out;
    out.reserve(ranks.size());
    for (const Rank& r : ranks) out.push_back(r.device);
    return out;
}

// A group around fn, closed on every path.
ncclResult_t grouped(const std::function<ncclResult_t()>& fn)
{
    NCCL_RETURN_IF_FAILED(ncclGroupStart());
    const ncclResult_t inside = fn();
    const ncclResult_t ended = ncclGroupEnd();
    return inside != ncclSuccess ? inside : ended;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;

    // A device that does not exist has no attributes: the failing CUDA call is reported as NCCL would.
    for (int d : devices) {
        int major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) != cudaSuccess) {
            cudaGetLastError();
            return ncclUnhandledCudaError;
        }
    }

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));
    const int n = static_cast<int>(devices.size());
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    std::vector<cudaStream_t> streams(devices.size(), nullptr);

    ncclResult_t result = grouped([&] {
        return for_each_device(devices, [&](std::size_t i, int) {
            return ncclCommInitRank(&comms[i], n, id, static_cast<int>(i));
        });
    });
    if (result == ncclSuccess)
        result = for_each_device(devices, [&](std::size_t i, int) {
            return cuda_result(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        });
    if (result != ncclSuccess) {
        for_each_device(devices, [&](std::size_t i, int) {
            if (streams[i] != nullptr) cudaStreamDestroy(streams[i]);
            if (comms[i] != nullptr) ncclCommAbort(comms[i]);
            return ncclSuccess;
        });
        return result;
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
        Rank r;
        r.device = devices[i];
        r.comm = comms[i];
        r.stream = streams[i];
        ranks.push_back(r);
    }
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return grouped([&] {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCL_RETURN_IF_FAILED(
                ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    const bool is_rank = root >= 0 && static_cast<std::size_t>(root) < ranks.size();
    if (!is_rank) return ncclInvalidArgument;
    return grouped([&] {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCL_RETURN_IF_FAILED(
                ncclBroadcast(buffers[i], buffers[i], count, ncclInt, ranks[root].device, ranks[i].comm, ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    return grouped([&] {
        for (int i = 0; i < n; ++i) {
            const Rank& me = ranks[i];
            float* slab = slabs[i];
            const int left = (i == 0) ? n - 1 : i - 1;
            const int right = (i + 1 == n) ? 0 : i + 1;
            auto send = [&](std::size_t from, int peer) { return ncclSend(slab + from, halo, ncclFloat, peer, me.comm, me.stream); };
            auto recv = [&](std::size_t into, int peer) { return ncclRecv(slab + into, halo, ncclFloat, peer, me.comm, me.stream); };
            NCCL_RETURN_IF_FAILED(recv(0, left));                 // left halo from the left: its last own
            NCCL_RETURN_IF_FAILED(send(interior, right));         // my last own to the right
            NCCL_RETURN_IF_FAILED(recv(halo + interior, right));  // right halo from the right: its first own
            NCCL_RETURN_IF_FAILED(send(halo, left));              // my first own to the left
        }
        return ncclSuccess;
    });
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    NCCL_RETURN_IF_FAILED(for_each_device(devices_of(ranks), [&](std::size_t i, int) {
        const Replica& rep = replicas[i];
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        NCCL_RETURN_IF_FAILED(cuda_result(cudaGetLastError()));
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        return cuda_result(cudaGetLastError());
    }));
    return grouped([&] {
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCL_RETURN_IF_FAILED(ncclAllReduce(replicas[i].gradients, replicas[i].gradients,
                                                replicas[i].gradient_count, ncclFloat, ncclAvg, ranks[i].comm,
                                                ranks[i].stream));
        return ncclSuccess;
    });
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        // Streams first: idle everywhere means done.
        bool idle = true;
        for (const Rank& r : ranks) {
            const cudaError_t q = cudaStreamQuery(r.stream);
            if (q == cudaErrorNotReady) {
                idle = false;
                continue;
            }
            NCCL_RETURN_IF_FAILED(cuda_result(q));
        }
        if (idle) return ncclSuccess;
        // Something is still running: has any communicator failed?
        for (const Rank& r : ranks) {
            if (r.comm == nullptr) continue;
            ncclResult_t state = ncclSuccess;
            NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(r.comm, &state));
            if (state == ncclSuccess || state == ncclInProgress) continue;
            for (Rank& each : ranks)
                if (each.comm != nullptr) {
                    ncclCommAbort(each.comm);
                    each.comm = nullptr;
                }
            return state;
        }
        std::this_thread::yield();
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    ncclResult_t first = ncclSuccess;
    auto keep = [&first](ncclResult_t r) {
        if (first == ncclSuccess) first = r;
    };
    {
        CurrentDeviceGuard guard;
        for (Rank& rank : ranks) {
            keep(cuda_result(cudaSetDevice(rank.device)));
            if (rank.stream != nullptr) {
                cudaError_t q;
                while ((q = cudaStreamQuery(rank.stream)) == cudaErrorNotReady) std::this_thread::yield();
                keep(cuda_result(q));
            }
            if (rank.comm != nullptr) {
                keep(ncclCommFinalize(rank.comm));
                keep(ncclCommDestroy(rank.comm));
                rank.comm = nullptr;
            }
            if (rank.stream != nullptr) keep(cuda_result(cudaStreamDestroy(rank.stream)));
            rank.stream = nullptr;
        }
    }
    ranks.clear();
    return first;
}
