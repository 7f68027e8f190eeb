// What an operation does to memory once every rank has posted its part: the data movement and
// reductions of each collective, and of a send with its receive, done on the host over the
// simulated device memory. Inputs are read in full before any output is written, so in-place
// calls get what NCCL gives them.
#pragma once

#include <vector>

#include "comm_state.h"

namespace mgpu::sim::nccl {

struct MatchedOp {
    Func func = Func::AllReduce;
    ncclDataType_t type = ncclFloat32;
    std::size_t count = 0;
    int root = -1;
    Reduction reduction;
    std::vector<OpArgs> parts;   // collectives: by rank; a send and its receive: {send, recv}
};

// Moves the data. Returns false when a buffer could not be read or written (a bad pointer: the
// kernel would fault on a GPU).
bool move_data(const MatchedOp& op);

}  // namespace mgpu::sim::nccl
