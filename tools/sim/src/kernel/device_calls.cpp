// What compiled kernel code reaches in the library: the built-in variables, the grid runner the
// launch template hands each grid to, and the out-of-line parts of barriers and warp operations.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "mgpu/sim/block_scheduler.h"
#include "mgpu/sim/block_execution.h"
#include "mgpu/sim/device_intrinsics.h"
#include "mgpu/sim/device_sync.h"
#include "mgpu/sim/kernel_submit.h"

uint3 threadIdx{0, 0, 0};
uint3 blockIdx{0, 0, 0};
dim3 blockDim{1, 1, 1};
dim3 gridDim{1, 1, 1};

namespace mgpu::sim::kernel {

ThreadCursor thread_cursor;
alignas(256) unsigned char dynamic_shared_memory[kDynamicSharedCapacity];

namespace {

// One scheduler per host thread, so a fiber only ever runs on the host thread that created it
// (code compiled into a fiber may keep addresses of thread-local data across a barrier).
thread_local std::unique_ptr<BlockScheduler> thread_scheduler;

BlockScheduler& scheduler_for_this_thread() {
    if (!thread_scheduler) thread_scheduler = std::make_unique<BlockScheduler>();
    return *thread_scheduler;
}

}  // namespace

void called_outside_kernel(const char* call, const std::source_location& where) {
    std::fprintf(stderr,
                 "%s:%u: error: %s was called outside a kernel. Barriers and warp operations are device code: "
                 "call them only from a __global__ function or the __device__ functions it calls.\n",
                 where.file_name(), static_cast<unsigned>(where.line()), call);
    std::abort();
}

void run_grid(const GridShape& shape, ThreadLoop loop, void* stored_arguments) {
    scheduler_for_this_thread().run_grid(shape, loop, stored_arguments);
}

void abandon_running_grid() {
    if (thread_scheduler) thread_scheduler->abandon_grid();
}

std::size_t pooled_fibers() { return thread_scheduler ? thread_scheduler->pooled_fibers() : 0; }

unsigned active_lanes() {
    BlockScheduler* const scheduler = active_scheduler;
    if (scheduler == nullptr) return 1u;
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return scheduler->warp_lanes_alive(linear);
}

}  // namespace mgpu::sim::kernel

long long clock64() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void __trap() {
    throw mgpu::sim::KernelFault{cudaErrorLaunchFailure, "the kernel called __trap()"};
}
