// At the end of train_step I synchronise every rank's stream, so the caller gets finished gradients
// when it returns.
#include "collectives.h"

#include <cstddef>
#include <utility>
#include <vector>
#include <memory>
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

// Ends an open group when it goes out of scope, unless end() has already been called.
class GroupScope {
public:
    GroupScope() : started_(ncclGroupStart()) {}
    ~GroupScope()
    {
        if (started_ == ncclSuccess && !ended_) ncclGroupEnd();
    }
    GroupScope(const GroupScope&) = delete;
    GroupScope& operator=(const GroupScope&) = delete;

    ncclResult_t started() const { return started_; }
    ncclResult_t end()
    {
        ended_ = true;
        return ncclGroupEnd();
    }

private:
    ncclResult_t started_;
    bool ended_ = false;
};

// Aborts a communicator that was never handed over.
struct CommAborter {
    void operator()(ncclComm_t comm) const
    {
        if (comm != nullptr) ncclCommAbort(comm);
    }
};
using OwnedComm = std::unique_ptr<std::remove_pointer_t<ncclComm_t>, CommAborter>;

// Destroys a stream that was never handed over, with its device current.
class OwnedStream {
public:
    OwnedStream() = default;
    OwnedStream(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
    OwnedStream(OwnedStream&& other) noexcept : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}
    OwnedStream& operator=(OwnedStream&&) = delete;
    OwnedStream(const OwnedStream&) = delete;
    ~OwnedStream()
    {
        if (stream_ == nullptr) return;
        CurrentDeviceGuard keep;
        cudaSetDevice(device_);
        cudaStreamDestroy(stream_);
    }
    cudaStream_t release() { return std::exchange(stream_, nullptr); }

private:
    int device_ = -1;
    cudaStream_t stream_ = nullptr;
};

ncclResult_t to_nccl(cudaError_t error)
{
    return error == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

}  // namespace

ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks)
{
    ranks.clear();
    if (devices.empty()) return ncclInvalidArgument;
    CurrentDeviceGuard guard;

    for (int device : devices) CUDA_RETURN_IF_FAILED(cudaSetDevice(device));

    ncclUniqueId id;
    NCCL_RETURN_IF_FAILED(ncclGetUniqueId(&id));

    const int n = static_cast<int>(devices.size());
    std::vector<ncclComm_t> raw(devices.size(), nullptr);
    ncclResult_t result = ncclSuccess;
    {
        GroupScope group;
        NCCL_RETURN_IF_FAILED(group.started());
        for (int r = 0; r < n && result == ncclSuccess; ++r) {
            result = to_nccl(cudaSetDevice(devices[r]));
            if (result == ncclSuccess) result = ncclCommInitRank(&raw[r], n, id, r);
        }
        const ncclResult_t ended = group.end();
        if (result == ncclSuccess) result = ended;
    }
    std::vector<OwnedComm> comms;
    for (ncclComm_t comm : raw) comms.emplace_back(comm);   // from here on, every one is aborted unless kept
    if (result != ncclSuccess) return result;

    std::vector<OwnedStream> streams;
    for (int r = 0; r < n; ++r) {
        CUDA_RETURN_IF_FAILED(cudaSetDevice(devices[r]));
        cudaStream_t stream = nullptr;
        CUDA_RETURN_IF_FAILED(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        streams.emplace_back(devices[r], stream);
    }

    std::vector<Rank> out(devices.size());
    for (int r = 0; r < n; ++r) {
        out[r].device = devices[r];
        out[r].comm = comms[r].release();
        out[r].stream = streams[r].release();
    }
    ranks = std::move(out);
    return ncclSuccess;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    GroupScope group;
    NCCL_RETURN_IF_FAILED(group.started());
    for (std::size_t i = 0; i < ranks.size(); ++i)
        NCCL_RETURN_IF_FAILED(
            ncclAllReduce(buffers[i], buffers[i], count, ncclFloat, ncclAvg, ranks[i].comm, ranks[i].stream));
    return group.end();
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    if (root < 0 || root >= static_cast<int>(ranks.size())) return ncclInvalidArgument;
    GroupScope group;
    NCCL_RETURN_IF_FAILED(group.started());
    for (std::size_t i = 0; i < ranks.size(); ++i)
        NCCL_RETURN_IF_FAILED(
            ncclBroadcast(buffers[i], buffers[i], count, ncclInt, root, ranks[i].comm, ranks[i].stream));
    return group.end();
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    const std::size_t n = ranks.size();
    GroupScope group;
    NCCL_RETURN_IF_FAILED(group.started());
    for (std::size_t i = 0; i < n; ++i) {
        const int left = static_cast<int>((i + n - 1) % n);
        const int right = static_cast<int>((i + 1) % n);
        const Rank& rank = ranks[i];
        float* slab = slabs[i];
        NCCL_RETURN_IF_FAILED(ncclSend(slab + halo, halo, ncclFloat, left, rank.comm, rank.stream));
        NCCL_RETURN_IF_FAILED(ncclSend(slab + interior, halo, ncclFloat, right, rank.comm, rank.stream));
        NCCL_RETURN_IF_FAILED(ncclRecv(slab + halo + interior, halo, ncclFloat, right, rank.comm, rank.stream));
        NCCL_RETURN_IF_FAILED(ncclRecv(slab, halo, ncclFloat, left, rank.comm, rank.stream));
    }
    return group.end();
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    CurrentDeviceGuard guard;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        const Replica& rep = replicas[i];
        produce_gradients<<<blocks_for(rep.gradient_count), threads_per_block, 0, ranks[i].stream>>>(
            rep.gradients, rep.gradient_count, static_cast<int>(i), step);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    {
        GroupScope group;
        NCCL_RETURN_IF_FAILED(group.started());
        for (std::size_t i = 0; i < ranks.size(); ++i)
            NCCL_RETURN_IF_FAILED(ncclAllReduce(replicas[i].gradients, replicas[i].gradients,
                                                replicas[i].gradient_count, ncclFloat, ncclAvg, ranks[i].comm,
                                                ranks[i].stream));
        NCCL_RETURN_IF_FAILED(group.end());
    }
    // The side work goes after the group: it does not need the gradients, so its stream runs beside them.
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        const Replica& rep = replicas[i];
        advance_activations<<<blocks_for(rep.activation_count), threads_per_block, 0, rep.side_stream>>>(
            rep.activations, rep.activation_count);
        CUDA_RETURN_IF_FAILED(cudaGetLastError());
    }
    for (std::size_t i = 0; i < ranks.size(); ++i) {   // the step is done when we return
        CUDA_RETURN_IF_FAILED(cudaSetDevice(ranks[i].device));
        CUDA_RETURN_IF_FAILED(cudaStreamSynchronize(ranks[i].stream));
    }
    return ncclSuccess;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    auto abort_all = [&ranks] {
        for (Rank& rank : ranks)
            if (rank.comm != nullptr) ncclCommAbort(std::exchange(rank.comm, nullptr));
    };
    for (;;) {
        bool idle = true;
        for (const Rank& rank : ranks) {
            if (rank.comm != nullptr) {
                ncclResult_t state = ncclSuccess;
                NCCL_RETURN_IF_FAILED(ncclCommGetAsyncError(rank.comm, &state));
                if (state != ncclSuccess && state != ncclInProgress) {
                    abort_all();
                    return state;
                }
            }
            const cudaError_t query = cudaStreamQuery(rank.stream);
            if (query == cudaErrorNotReady) idle = false;
            else CUDA_RETURN_IF_FAILED(query);
        }
        if (idle) return ncclSuccess;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    CurrentDeviceGuard guard;
    ncclResult_t first = ncclSuccess;
    auto keep = [&first](ncclResult_t result) {
        if (first == ncclSuccess) first = result;
    };
    for (Rank& rank : ranks) {
        keep(to_nccl(cudaSetDevice(rank.device)));
        if (rank.stream != nullptr) keep(to_nccl(cudaStreamSynchronize(rank.stream)));
        if (ncclComm_t comm = std::exchange(rank.comm, nullptr); comm != nullptr) {
            keep(ncclCommFinalize(comm));
            keep(ncclCommDestroy(comm));
        }
        if (cudaStream_t stream = std::exchange(rank.stream, nullptr); stream != nullptr)
            keep(to_nccl(cudaStreamDestroy(stream)));
    }
    ranks.clear();
    return first;
}
