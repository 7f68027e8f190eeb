// The seam between the launch path (kernel/, which knows how to run a grid of threads) and
// the runtime core (runtime/, which knows devices, streams, time and errors).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mgpu/sim/site.h"
#include "mgpu/sim/types.h"

namespace mgpu::sim {

struct KernelLaunch {
    std::string name;                        // the kernel's name as written
    const void* function = nullptr;          // the kernel's address: what cudaFuncSetAttribute names it by
    dim3 grid{1, 1, 1};
    dim3 block{1, 1, 1};
    std::size_t dynamic_shared = 0;
    cudaStream_t stream = nullptr;
    Site site;
    std::vector<const void*> pointer_args;   // every pointer-typed argument, checked for access at launch
    // What the cost model needs to estimate the kernel's memory traffic before it runs (a kernel's
    // time is fixed when it is queued): per pointer argument (same order) the size of what it points
    // to and whether the kernel may write through it, and the largest integral argument, which is
    // usually the element count a grid-stride loop walks over.
    std::vector<std::size_t> pointee_sizes;
    std::vector<bool> pointer_writable;
    std::vector<bool> pointer_volatile;      // a `volatile T*`: memory someone else changes while it runs
    unsigned long long largest_count = 0;
    std::function<void()> run_grid;          // runs all blocks; may throw KernelFault
};

// Raised from inside a running grid (divergent barrier, too much shared memory, ...).
struct KernelFault {
    cudaError_t code;
    std::string message;
};

// Implemented by the runtime core: validates the configuration against the current device,
// records the launch, and queues the grid on its stream. Sets the last error as a launch does;
// returns the launch's own result (what cudaGetLastError would give right after it).
cudaError_t submit_kernel(KernelLaunch&& launch);

}  // namespace mgpu::sim
