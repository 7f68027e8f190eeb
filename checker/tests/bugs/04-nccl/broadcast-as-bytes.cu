// I broadcast the ints as ncclUint8 with `count` elements, thinking a broadcast only copies raw
// memory so the type does not matter.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <array>
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

// Remembers the first failure; later ones are ignored.
class FirstError {
public:
    FirstError& operator<<(ncclResult_t r)
    {
        if (first_ == ncclSuccess) first_ = r;
        return *this;
    }
    FirstError& operator<<(cudaError_t e) { return *this << (e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError); }
    bool ok() const { return first_ == ncclSuccess; }
    ncclResult_t get() const { return first_; }

private:
    ncclResult_t first_ = ncclSuccess;
};

// One side of a halo exchange for one rank, in slab offsets.
struct Transfer {
    bool send;
    std::size_t offset;
    int peer;
};

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    FirstError status;

    for (int d : devices) {
        status << cudaSetDevice(d);
        if (!status.ok()) return status.get();
    }

    ncclUniqueId id;
    status << ncclGetUniqueId(&id);
    if (!status.ok()) return status.get();

    const int n = static_cast<int>(devices.size());
    std::vector<Rank> made(devices.size());
    status << ncclGroupStart();
    if (status.ok()) {
        for (int r = 0; r < n && status.ok(); ++r) {
            made[r].device = devices[r];
            status << cudaSetDevice(devices[r]);
            if (status.ok()) status << ncclCommInitRank(&made[r].comm, n, id, r);
        }
        status << ncclGroupEnd();
    }
    for (int r = 0; r < n && status.ok(); ++r) {
        status << cudaSetDevice(devices[r]);
        if (status.ok()) status << cudaStreamCreateWithFlags(&made[r].stream, cudaStreamNonBlocking);
        if (!status.ok()) made[r].stream = nullptr;
    }
    if (!status.ok()) {
        for (Rank& m : made) {
            if (m.stream) {
                cudaSetDevice(m.device);
                cudaStreamDestroy(m.stream);
            }
            if (m.comm) ncclCommAbort(m.comm);
        }
        return status.get();
    }
    ranks = std::move(made);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    FirstError status;
    status << ncclGroupStart();
    if (!status.ok()) return status.get();
    for (std::size_t i = 0; i < ranks.size() && status.ok(); ++i)
        status << ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream);
    status << ncclGroupEnd();
    return status.get();
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    FirstError status;
    status << ncclGroupStart();
    if (!status.ok()) return status.get();
    for (std::size_t i = 0; i < ranks.size() && status.ok(); ++i)
        status << ncclBroadcast(buffers[i], buffers[i], count, ncclUint8, root, ranks[i].comm, ranks[i].stream);
    status << ncclGroupEnd();
    return status.get();
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const int n = static_cast<int>(ranks.size());
    FirstError status;
    status << ncclGroupStart();
    if (!status.ok()) return status.get();
    for (int i = 0; i < n && status.ok(); ++i) {
        const int left = (i + n - 1) % n;
        const int right = (i + 1) % n;
        // The same order on every rank, so that two sends to one peer meet that peer's receives in order.
        const std::array<Transfer, 4> plan = {{
            {true, halo, left},                // first own elements -> left neighbour's right halo
            {true, interior, right},           // last own elements  -> right neighbour's left halo
            {false, halo + interior, right},   // right halo <- right neighbour's first own elements
            {false, 0, left},                  // left halo  <- left neighbour's last own elements
        }};
        for (const Transfer& t : plan) {
            float* at = slabs[i] + t.offset;
            if (t.send) status << ncclSend(at, halo, ncclFloat, t.peer, ranks[i].comm, ranks[i].stream);
            else status << ncclRecv(at, halo, ncclFloat, t.peer, ranks[i].comm, ranks[i].stream);
            if (!status.ok()) break;
        }
    }
    status << ncclGroupEnd();
    return status.get();
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    FirstError status;
    for (std::size_t i = 0; i < ranks.size() && status.ok(); ++i) {
        const Replica& rep = replicas[i];
        status << cudaSetDevice(ranks[i].device);
        if (!status.ok()) break;
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        status << cudaGetLastError();
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        status << cudaGetLastError();
    }
    if (!status.ok()) return status.get();
    status << ncclGroupStart();
    if (!status.ok()) return status.get();
    for (std::size_t i = 0; i < ranks.size() && status.ok(); ++i)
        status << ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                                ncclAvg, ranks[i].comm, ranks[i].stream);
    status << ncclGroupEnd();
    return status.get();
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    for (;;) {
        FirstError async;
        FirstError query;
        bool busy = false;
        for (const Rank& rank : ranks) {
            if (rank.comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                async << ncclCommGetAsyncError(rank.comm, &state);
                if (state != ncclInProgress) async << state;
            }
            const cudaError_t q = cudaStreamQuery(rank.stream);
            if (q == cudaErrorNotReady) busy = true;
            else query << q;
        }
        if (!async.ok()) {
            for (Rank& rank : ranks) {
                if (rank.comm != nullptr) ncclCommAbort(rank.comm);
                rank.comm = nullptr;
            }
            return async.get();
        }
        if (!query.ok()) return query.get();
        if (!busy) return ncclSuccess;
        std::this_thread::yield();
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    FirstError status;
    for (Rank& rank : ranks) {
        status << cudaSetDevice(rank.device);
        if (rank.stream != nullptr) status << cudaStreamSynchronize(rank.stream);
        if (rank.comm != nullptr) {
            status << ncclCommFinalize(rank.comm);
            status << ncclCommDestroy(rank.comm);
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) status << cudaStreamDestroy(rank.stream);
        rank.stream = nullptr;
    }
    ranks.clear();
    return status.get();
}
