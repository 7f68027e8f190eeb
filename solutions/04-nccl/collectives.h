// Lesson 4, multi-GPU with NCCL: the functions you write in collectives.cu.
// The checker calls each of them on several simulated machines; do not change this file.
//
// One host thread drives every GPU. Every function returns an ncclResult_t: the first NCCL call that
// failed gives its own result, and a CUDA call that failed gives ncclUnhandledCudaError, as NCCL
// itself reports a CUDA failure; the result is the whole report, and CUDA's last error
// (cudaGetLastError) after a failure is not part of this contract. The functions that queue work
// (tasks 2 to 5) return as soon as it is queued, without waiting for the GPUs; wait_for_ranks
// (task 6) waits. A function that opens a group (ncclGroupStart) closes it (ncclGroupEnd) on every
// path, a failure included: a group left open takes in every later NCCL call of this thread.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda_runtime.h>
#include <nccl.h>

// One GPU's place in the job: the device, its communicator (rank i of ranks.size()), and the stream
// that the rank's NCCL work and the kernels feeding it are queued on.
struct Rank {
    int device = -1;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
};

// Task 1 (each task is numbered the same way in collectives.cu). One communicator per listed device,
// all made from this host thread: `ranks` gets one entry per device, entry i being rank i on devices[i],
// with a non-blocking stream created on that device. An empty list gives ncclInvalidArgument. A device
// id that does not exist gives ncclInvalidArgument when checked against cudaGetDeviceCount first, or
// ncclUnhandledCudaError from the cudaSetDevice that fails on it: either is right. On any failure
// nothing is left behind (no communicator, no stream) and `ranks` is empty. The caller's current
// device is given back.
ncclResult_t open_ranks(const std::vector<int>& devices, std::vector<Rank>& ranks);

// Task 2. buffers[i] holds `count` floats on ranks[i].device. Afterwards every element of every buffer
// is the average of that element over all ranks: one all-reduce per rank, in place, on the rank's
// stream, all of them in one group. count = 0 is fine (nothing to do).
ncclResult_t average_in_place(const std::vector<Rank>& ranks, const std::vector<float*>& buffers,
                              std::size_t count);

// Task 3. buffers[i] holds `count` ints on ranks[i].device. Afterwards every buffer holds what the
// buffer of rank `root` held: a broadcast in place, on each rank's stream, all in one group. A root
// outside [0, ranks.size()) gives ncclInvalidArgument and queues nothing.
ncclResult_t broadcast_from_root(const std::vector<Rank>& ranks, const std::vector<int*>& buffers,
                                 std::size_t count, int root);

// Task 4. A periodic halo exchange along the ring of ranks. slabs[i] holds halo + interior + halo
// floats on ranks[i].device:
//     [0, halo)                               left halo
//     [halo, halo + interior)                 rank i's own elements
//     [halo + interior, 2 * halo + interior)  right halo
// Afterwards rank i's left halo holds the last `halo` own elements of rank i - 1, and its right halo
// the first `halo` own elements of rank i + 1 (rank 0's left neighbour is the last rank, and the last
// rank's right neighbour is rank 0; a single rank is its own neighbour on both sides). Own elements do
// not change. Sends and receives with ncclSend and ncclRecv, in one group. Requires halo <= interior.
ncclResult_t exchange_halos(const std::vector<Rank>& ranks, const std::vector<float*>& slabs, std::size_t interior,
                            std::size_t halo);

// One rank's data for a training step. `side_stream` is a stream of the rank's device for work that
// does not depend on the gradients.
struct Replica {
    float* gradients = nullptr;      // gradient_count floats on the rank's device
    std::size_t gradient_count = 0;
    float* activations = nullptr;    // activation_count floats on the rank's device
    std::size_t activation_count = 0;
    cudaStream_t side_stream = nullptr;
};

// Task 5. One step of data-parallel training on every rank i, queued and not waited for:
//   - produce_gradients (a kernel given in collectives.cu) writes replica i's gradients;
//   - the gradients are then averaged across all ranks in place, strictly after the kernel that wrote
//     them on the same rank;
//   - advance_activations (given) updates replica i's activations on the side stream, running on the
//     GPU while the gradients are averaged.
// `step` is passed to produce_gradients unchanged. The caller's current device is given back.
ncclResult_t train_step(const std::vector<Rank>& ranks, const std::vector<Replica>& replicas, int step);

// Task 6. Waits until the work queued on every rank's stream is done, without blocking on any one
// stream: a failed NCCL operation never finishes. It polls the streams and every communicator's
// asynchronous error; when a communicator reports one, it aborts every communicator (setting each
// comm to nullptr) and returns that error. Otherwise returns ncclSuccess once every stream is idle.
ncclResult_t wait_for_ranks(std::vector<Rank>& ranks);

// Task 7. Ends every rank, with the rank's device current: its queued work is finished first, then its
// communicator is finalized and destroyed (skipped when comm is nullptr, already aborted), then its
// stream is destroyed. `ranks` is empty afterwards. Returns the first failure, carrying on with the
// other ranks. The caller's current device is given back.
ncclResult_t close_ranks(std::vector<Rank>& ranks);
