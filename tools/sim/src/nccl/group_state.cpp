#include "group_state.h"

#include <map>

#include "hang_watch.h"
#include "rendezvous.h"
#include "runtime/scheduler.h"

namespace mgpu::sim::nccl {

GroupState& group() {
    thread_local GroupState state;
    return state;
}

ncclResult_t launch(GroupState& batch, const std::string& what) {
    // NCCL refuses a send to self (or a receive from self) that has no partner in the same launch,
    // as it would wait for itself forever: ncclInvalidUsage, and nothing of the batch runs.
    std::map<ncclComm*, int> self_balance;
    for (const auto& [comm, args] : batch.operations)
        if (is_p2p(args.func) && args.root == comm->rank) self_balance[comm] += args.func == Func::Send ? 1 : -1;
    for (const auto& [comm, balance] : self_balance) {
        if (balance == 0) continue;
        set_last_error(comm, balance > 0 ? "Trying to send to self without a matching recv"
                                         : "Trying to recv from self without a matching send");
        batch.operations.clear();
        batch.inits.clear();
        batch.splits.clear();
        return ncclInvalidUsage;
    }
    auto ticket = std::make_shared<Ticket>();
    bool any_blocking = false;
    for (InitRequest& request : batch.inits) {
        any_blocking |= request.comm->blocking;
        request.ticket = ticket;
        post_init(std::move(request));
    }
    for (auto& split : batch.splits) {
        any_blocking |= split->blocking;
        split->ticket = ticket;
        post_split(std::move(split));
    }
    for (auto& [comm, args] : batch.operations) {
        if (!is_p2p(args.func)) continue;
        args.timed_from_launch = true;
        args.launch_deps = rt::stream_dependencies(args.stream);
    }
    for (auto& [comm, args] : batch.operations) {
        any_blocking |= comm->blocking;
        post_operation(comm, args, ticket);
    }
    batch.inits.clear();
    batch.splits.clear();
    batch.operations.clear();
    if (any_blocking) wait_for(ticket, what);
    if (ticket->outstanding > 0) return ncclInProgress;
    return ticket->result;
}

ncclResult_t finish(rt::ApiCall& call, ncclResult_t result) {
    if (result != ncclSuccess && result != ncclInProgress && last_error_set_in_this_call())
        call.set_reason(process_last_error());
    last_error_set_in_this_call() = false;
    call.done_without_error(static_cast<cudaError_t>(result));
    return result;
}

void arg_comm(rt::ApiCall& call, const char* name, const ncclComm* comm) {
    if (!known_comm(comm)) {
        call.arg(name, static_cast<const void*>(comm));
        return;
    }
    const long long id = comm->clique ? static_cast<long long>(comm->clique->id) : 0;
    const std::string shown = "comm#" + std::to_string(id) + " rank " + std::to_string(comm->rank);
    call.arg_named(name, id, shown.c_str());
}

}  // namespace mgpu::sim::nccl
