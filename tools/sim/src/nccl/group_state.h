// ncclGroupStart / ncclGroupEnd: what a host thread has called inside its open group, held back
// until the outermost ncclGroupEnd launches all of it at once, and the launch itself (shared by
// calls made outside a group, which are groups of one).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm_state.h"
#include "runtime/api_call.h"

namespace mgpu::sim::nccl {

struct GroupState {
    int depth = 0;
    // The result of the latest collective, send or receive refused inside the open group. NCCL makes a group one
    // atomic launch: once a call in it failed, the outermost ncclGroupEnd launches none of the
    // group's work and returns that result (docs/nccl-group-errors.md). A group that initialises
    // communicators still initialises them: NCCL would destroy them half made, which no program
    // can use, and the refused call has already reported its result.
    ncclResult_t refused = ncclSuccess;
    std::string refused_reason;   // NCCL's last error for that refusal, which ncclGroupEnd returns again
    std::vector<std::pair<ncclComm*, OpArgs>> operations;
    std::vector<InitRequest> inits;
    std::vector<std::unique_ptr<SplitRequest>> splits;
};

// The calling thread's group.
GroupState& group();

// Posts everything in `batch` and, unless every communicator in it is non-blocking, waits until
// all of it is matched. Returns the batch's result (ncclInProgress for non-blocking work still
// pending). `what` names the call for a hang diagnosis.
ncclResult_t launch(GroupState& batch, const std::string& what);

// The end of an NCCL API call: the result in the trace, without touching CUDA's last error.
ncclResult_t finish(rt::ApiCall& call, ncclResult_t result);

// "comm#3 rank 1" for the trace.
void arg_comm(rt::ApiCall& call, const char* name, const ncclComm* comm);

}  // namespace mgpu::sim::nccl
