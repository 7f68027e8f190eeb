// Words for the faults a block can end with: which kernel and block, which threads, which call.
#pragma once

#include <string>
#include <vector>

#include "mgpu/sim/block_scheduler.h"

namespace mgpu::sim::kernel {

// "kernel 'reduce' (launched at app.cu:40), block (2,0,0)"
std::string where_in_grid(const GridShape& shape, const uint3& block);

// A set of threads of one block, given by linear index in ascending order:
// "threadIdx.x 0-15, 32" for a one-dimensional block, "threads (0,1,0), (1,1,0) and 6 more" otherwise.
std::string describe_threads(const std::vector<unsigned>& linear, const dim3& block);

// Lanes of one warp: "lanes 0-15".
std::string describe_lanes(std::uint32_t lanes);

// "__syncthreads() at app.cu:17"
std::string describe_call(const WaitRequest& request);

}  // namespace mgpu::sim::kernel
