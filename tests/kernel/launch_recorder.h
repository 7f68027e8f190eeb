// A stand-in for the runtime core in the kernel library's unit tests: submit_kernel records what
// the launch template handed over and runs the grid at once (or later, on request), keeping the
// KernelFault a grid ends with so that tests can read its code and message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mgpu/sim/kernel_submit.h"

namespace kernel_test {

struct LaunchRecord {
    std::string name;
    const void* function = nullptr;
    dim3 grid, block;
    std::size_t dynamic_shared = 0;
    cudaStream_t stream = nullptr;
    mgpu::sim::Site site;
    std::vector<const void*> pointer_args;
};

enum class Execution { Immediate, Deferred };

void set_execution(Execution execution);
const std::vector<LaunchRecord>& launches();
void forget_launches();

// Runs the grids submitted while execution was Deferred, in submission order.
void run_deferred();

// The fault the most recent grid ended with (reset when a grid starts).
const std::optional<mgpu::sim::KernelFault>& last_fault();

// The line of `marker` in a file of this folder (the first line containing it), for checking
// that launch sites and fault messages point at the original source.
int line_of(const std::string& file, const std::string& marker);

}  // namespace kernel_test
