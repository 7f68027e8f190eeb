// Lesson 4, multi-GPU with NCCL: write the bodies marked TODO(1) to TODO(7).
// Each TODO says what to write and names the section of lessons/04-nccl/README.md that teaches it;
// the header states each function's contract. Stuck? tools/mgpu hint 4 [TODO] gives hints one
// at a time, from a nudge to the shape of the code.
//   tools/mgpu run 4     builds this file with main.cu and shows what works so far
//   tools/mgpu check 4   grades it on several simulated machines
// Every body compiles as given and returns ncclInvalidUsage until you write it.
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
    // TODO(1) (lesson 4, section 4.2; contract: Task 1 in collectives.h): one rank per device
    // (communicator and stream), all made from this thread, nothing left behind on failure.
    (void)devices;   // delete this line once you use it
    ranks.clear();
    return ncclInvalidUsage;
}

ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count)
{
    // TODO(2) (lesson 4, sections 4.3 and 4.4; contract: Task 2 in collectives.h): queue the
    // in-place average of every rank's buffer, waiting for nothing.
    (void)ranks, (void)buffers, (void)count;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root)
{
    // TODO(3) (lesson 4, section 4.4; contract: Task 3 in collectives.h): queue a broadcast of the
    // root's buffer to every rank; a root that is not a rank is refused first.
    (void)ranks, (void)buffers, (void)count, (void)root;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo)
{
    // TODO(4) (lesson 4, section 4.6; contract: Task 4 in collectives.h): every rank's halos filled
    // from its neighbours on a ring, with the layout the header describes.
    (void)ranks, (void)slabs, (void)interior, (void)halo;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step)
{
    // TODO(5) (lesson 4, section 4.5; contract: Task 5 in collectives.h): queue one training step
    // on every rank, so that the activations advance while the gradients are averaged; nothing
    // waits.
    (void)ranks, (void)replicas, (void)step;   // delete this line once you use them
    return ncclInvalidUsage;
}

ncclResult_t wait_for_ranks(std::vector<Rank>& ranks)
{
    // TODO(6) (lesson 4, section 4.7; contract: Task 6 in collectives.h): wait until every rank's
    // stream is idle, or abort every communicator on the first asynchronous error.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
}

ncclResult_t close_ranks(std::vector<Rank>& ranks)
{
    // TODO(7) (lesson 4, section 4.8; contract: Task 7 in collectives.h): release every rank in the
    // order NCCL requires, going on after failures, and return the first one.
    (void)ranks;   // delete this line once you use it
    return ncclInvalidUsage;
}
