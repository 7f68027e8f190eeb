// Where the ranks meet. Each rank posts its part of an operation when it is launched (at the
// call outside a group, at the outermost ncclGroupEnd inside one); the k-th collective of every
// rank of a communicator, and the k-th send from a to b with the k-th receive at b from a, form
// one operation, enqueued on every rank's stream once the last part is posted. Parts that
// disagree (counts, types, operations, roots, order) stop the program with a diagnosis: on GPUs
// they hang or give wrong data.
#pragma once

#include <memory>

#include "comm_state.h"

namespace mgpu::sim::nccl {

void post_operation(ncclComm* comm, const OpArgs& args, const std::shared_ptr<Ticket>& ticket);
void post_init(InitRequest request);
void post_split(std::unique_ptr<SplitRequest> request);

}  // namespace mgpu::sim::nccl
