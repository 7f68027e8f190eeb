// I wrap cudaStreamQuery in my check(), so a stream that is still busy (cudaErrorNotReady) comes back
// as ncclUnhandledCudaError.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <exception>
#include <stdexcept>

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

struct nccl_error : std::runtime_error {
    explicit nccl_error(ncclResult_t r) : std::runtime_error(ncclGetErrorString(r)), result(r) {}
    ncclResult_t result;
};

void check(ncclResult_t r)
{
    if (r != ncclSuccess) throw nccl_error(r);
}

void check(cudaError_t e)
{
    if (e != cudaSuccess) throw nccl_error(ncclUnhandledCudaError);
}

// Runs f and maps whatever it throws to the ncclResult_t the header wants.
template <class F>
ncclResult_t guarded(F&& f) noexcept
{
    try {
        f();
        return ncclSuccess;
    } catch (const nccl_error& e) {
        return e.result;
    } catch (const std::bad_alloc&) {
        return ncclSystemError;
    } catch (...) {
        return ncclInternalError;
    }
}

// Opens a group and, however the scope is left, closes it; a failing close is thrown only on the normal path.
class Group {
public:
    Group() { check(ncclGroupStart()); }
    ~Group() noexcept(false)
    {
        const ncclResult_t ended = ncclGroupEnd();
        if (std::uncaught_exceptions() == pending_) check(ended);
    }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;

private:
    int pending_ = std::uncaught_exceptions();
};

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;
    std::vector<Rank> made(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) made[i].device = devices[i];

    const ncclResult_t result = guarded([&] {
        int visible = 0;
        check(cudaGetDeviceCount(&visible));
        for (int d : devices)
            if (d < 0 || d >= visible) throw nccl_error(ncclInvalidArgument);

        ncclUniqueId id;
        check(ncclGetUniqueId(&id));
        const int n = static_cast<int>(made.size());
        {
            Group group;
            for (int r = 0; r < n; ++r) {
                check(cudaSetDevice(made[r].device));
                check(ncclCommInitRank(&made[r].comm, n, id, r));
            }
        }
        for (Rank& r : made) {
            check(cudaSetDevice(r.device));
            check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
        }
    });

    if (result != ncclSuccess) {
        for (Rank& r : made) {
            if (r.stream != nullptr) {
                cudaSetDevice(r.device);
                cudaStreamDestroy(r.stream);
            }
            if (r.comm != nullptr) ncclCommAbort(r.comm);
        }
        return result;
    }
    ranks = std::move(made);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    return guarded([&] {
        Group group;
        for (std::size_t i = 0; i < ranks.size(); ++i)
            check(ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
    });
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    return guarded([&] {
        if (root < 0 || root >= static_cast<int>(ranks.size())) throw nccl_error(ncclInvalidArgument);
        Group group;
        for (std::size_t i = 0; i < ranks.size(); ++i)
            check(ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream));
    });
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    return guarded([&] {
        const int n = static_cast<int>(ranks.size());
        Group group;
        for (int i = 0; i < n; ++i) {
            const int left = (i - 1 + n) % n, right = (i + 1) % n;
            float* slab = slabs[i];
            check(ncclSend(slab + halo, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream));
            check(ncclSend(slab + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream));
            check(ncclRecv(slab + halo + interior, halo, ncclFloat, right, ranks[i].comm, ranks[i].stream));
            check(ncclRecv(slab, halo, ncclFloat, left, ranks[i].comm, ranks[i].stream));
        }
    });
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    return guarded([&] {
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            const Replica& rep = replicas[i];
            check(cudaSetDevice(ranks[i].device));
            produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
                rep.gradients, rep.gradient_count, static_cast<int>(i), step);
            check(cudaGetLastError());
            advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
                rep.activations, rep.activation_count);
            check(cudaGetLastError());
        }
        Group group;
        for (std::size_t i = 0; i < ranks.size(); ++i)
            check(ncclAllReduce(replicas[i].gradients, replicas[i].gradients, replicas[i].gradient_count, ncclFloat,
                                ncclAvg, ranks[i].comm, ranks[i].stream));
    });
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    bool comm_failed = false;
    const ncclResult_t result = guarded([&] {
        for (bool busy = true; busy;) {
            busy = false;
            for (const Rank& rank : ranks) {
                if (rank.comm != nullptr) {
                    ncclResult_t state = ncclSuccess;
                    check(ncclCommGetAsyncError(rank.comm, &state));
                    if (state != ncclSuccess && state != ncclInProgress) {
                        comm_failed = true;
                        throw nccl_error(state);
                    }
                }
                check(cudaStreamQuery(rank.stream));
            }
        }
    });
    if (comm_failed) {
        for (Rank& rank : ranks)
            if (rank.comm != nullptr) {
                ncclCommAbort(rank.comm);
                rank.comm = nullptr;
            }
    }
    return result;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto step = [&first](auto&& f) {
        const ncclResult_t r = guarded(f);
        if (first == ncclSuccess) first = r;
    };
    for (Rank& rank : ranks) {
        step([&] { check(cudaSetDevice(rank.device)); });
        if (rank.stream != nullptr) step([&] { check(cudaStreamSynchronize(rank.stream)); });
        if (rank.comm != nullptr) {
            step([&] { check(ncclCommFinalize(rank.comm)); });
            step([&] { check(ncclCommDestroy(rank.comm)); });
            rank.comm = nullptr;
        }
        if (rank.stream != nullptr) step([&] { check(cudaStreamDestroy(rank.stream)); });
        rank.stream = nullptr;
    }
    ranks.clear();
    return first;
}
