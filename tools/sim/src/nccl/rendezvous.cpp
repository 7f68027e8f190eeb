#include "rendezvous.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "collective_data.h"
#include "collective_timing.h"
#include "element_types.h"
#include "hang_watch.h"
#include "runtime/scheduler.h"
#include "mgpu/sim/machine.h"

namespace mgpu::sim::nccl {

namespace {

void settle(const std::shared_ptr<Ticket>& ticket) {
    if (ticket && ticket->outstanding > 0) --ticket->outstanding;
}

std::string part_text(const Posted& posted) {
    return "rank " + std::to_string(posted.comm->rank) + " called " + describe(posted.args) + " at " +
           where_text(posted.args.site) + " (host thread " + std::to_string(posted.args.host_thread) + ")";
}

// Every rank's part is queued on its own stream. The first part carries the data movement and
// follows what each rank's stream had queued before; the others follow it, so nothing after the
// operation on any stream runs before the data has moved. All parts share one start (when the
// last rank is ready) and one end.
void enqueue_parts(const MatchedOp& op, const std::vector<ncclComm*>& comms, const Timing& timing,
                   std::uint64_t clique_id) {
    rt::Runtime& r = rt::runtime();
    if (op.count == 0) return;   // NCCL launches nothing for an empty operation
    std::vector<std::vector<std::uint64_t>> deps(op.parts.size());
    double start = 0;
    for (std::size_t i = 0; i < op.parts.size(); ++i) {
        const OpArgs& part = op.parts[i];
        deps[i] = rt::stream_dependencies(part.stream);
        start = std::max(start, part.posted_at_us);
        for (std::uint64_t dep : part.timed_from_launch ? part.launch_deps : deps[i])
            start = std::max(start, rt::op_end_us(dep));
    }
    auto shared = std::make_shared<MatchedOp>(op);
    std::uint64_t leader = 0;
    // An injected failure (MGPU_FAULTS ncclfail=N): the operation never finishes and moves nothing.
    const bool fails = ++registry().matched_ops == r.options.faults.nccl_fails_at;
    for (std::size_t i = 0; i < op.parts.size(); ++i) {
        const OpArgs& part = op.parts[i];
        ncclComm* comm = comms[i];
        rt::OpRequest request;
        request.kind = mgpu::trace::OpKind::Collective;
        request.name = std::string(func_name(part.func)) + " comm#" + std::to_string(clique_id) + " rank " +
                       std::to_string(comm->rank) + " " + timing.algorithm + "/" + timing.protocol;
        request.stream = part.stream;
        request.device = comm->device;
        request.src_device = op.func == Func::Send || op.func == Func::Recv ? comms[0]->device : -1;
        request.dst_device = op.func == Func::Send || op.func == Func::Recv ? comms[1]->device : -1;
        request.duration_us = fails ? rt::kNeverUs : timing.us;
        if (fails)
            request.stuck = describe(part) + " of rank " + std::to_string(comm->rank) + " on comm#" +
                            std::to_string(clique_id) + ", posted at " + where_text(part.site);
        request.start_at_us = start;
        request.bytes = part.count * type_size(part.type);
        if (i == 0 && fails) {
            for (std::size_t j = 1; j < deps.size(); ++j)
                request.extra_deps.insert(request.extra_deps.end(), deps[j].begin(), deps[j].end());
        } else if (i == 0) {
            for (std::size_t j = 1; j < deps.size(); ++j)
                request.extra_deps.insert(request.extra_deps.end(), deps[j].begin(), deps[j].end());
            request.work = [shared] {
                if (!move_data(*shared)) {
                    rt::Runtime& rr = rt::runtime();
                    const int device = shared->parts.front().stream->device;
                    rr.devices[device].sticky = cudaErrorIllegalAddress;
                    rt::mark_op_error(rt::executing_op(), cudaErrorIllegalAddress);
                    std::fprintf(stderr,
                                 "mgpu-sim: %s read or wrote memory it cannot reach (a host pointer or a freed "
                                 "buffer?); device %d now answers 700 (illegal address).\n",
                                 describe(shared->parts.front()).c_str(), device);
                }
            };
        } else {
            request.extra_deps.push_back(leader);
        }
        const rt::Enqueued enqueued = rt::enqueue(std::move(request));
        if (i == 0) leader = enqueued.id;
        comm->last_op = enqueued.id;
        auto index = r.op_trace_index.find(enqueued.id);
        if (index != r.op_trace_index.end()) r.trace.ops[index->second].api_seq = part.api_seq;
        if (fails) comm->stuck_ops.push_back(enqueued.id);
    }
    if (fails) fail_asynchronously(*comms.front()->clique, describe(op.parts.front()));
}

bool same_collective(const Posted& a, const Posted& b) {
    const OpArgs& x = a.args;
    const OpArgs& y = b.args;
    if (x.func != y.func || x.count != y.count || x.type != y.type) return false;
    if (takes_root(x.func) && x.root != y.root) return false;
    if (takes_op(x.func)) {
        const Reduction& p = x.reduction;
        const Reduction& q = y.reduction;
        if (p.base != q.base || p.premultiply != q.premultiply || p.divide_by_ranks != q.divide_by_ranks) return false;
    }
    return true;
}

[[noreturn]] void stop_at_mismatch(const Clique& clique, const std::vector<const Posted*>& heads) {
    std::string details = "  Collective #" + std::to_string(heads.front()->seq) + " of comm#" +
                          std::to_string(clique.id) + ":\n";
    for (const Posted* head : heads) details += "    " + part_text(*head) + "\n";
    stop_program("ranks of comm#" + std::to_string(clique.id) +
                     " disagree on their collective #" + std::to_string(heads.front()->seq) +
                     ". Every rank must call the same collectives, in the same order, with the same count, type, "
                     "operation and root. On GPUs this hangs, or completes with wrong data where counts differ.",
                 details);
}

void match_collectives(Clique& clique) {
    Registry& reg = registry();
    for (;;) {
        for (const auto& queue : clique.collectives)
            if (queue.empty()) return;
        std::vector<const Posted*> heads;
        for (const auto& queue : clique.collectives) heads.push_back(&queue.front());
        for (const Posted* head : heads)
            if (!same_collective(*heads.front(), *head)) stop_at_mismatch(clique, heads);
        MatchedOp op;
        const OpArgs& first = heads.front()->args;
        op.func = first.func;
        op.type = first.type;
        op.count = first.count;
        op.root = first.root;
        op.reduction = first.reduction;
        std::vector<ncclComm*> comms;
        std::vector<int> devices;
        for (const Posted* head : heads) {
            op.parts.push_back(head->args);
            comms.push_back(head->comm);
            devices.push_back(head->comm->device);
        }
        const Timing timing = collective_time(op.func, op.count, type_size(op.type), devices);
        ++clique.matched_collectives;
        enqueue_parts(op, comms, timing, clique.id);
        for (auto& queue : clique.collectives) {
            settle(queue.front().ticket);
            queue.pop_front();
        }
        ++reg.progress;
        notify_progress();
    }
}

void match_pair(Clique& clique, int from, int to) {
    Registry& reg = registry();
    auto& sends = clique.sends[{from, to}];
    auto& recvs = clique.recvs[{from, to}];
    while (!sends.empty() && !recvs.empty()) {
        const Posted& send = sends.front();
        const Posted& recv = recvs.front();
        if (send.args.count != recv.args.count || send.args.type != recv.args.type) {
            stop_program("a send and its receive disagree on comm#" + std::to_string(clique.id) +
                             ": they must have the same count and datatype. On GPUs this hangs or truncates.",
                         "    " + part_text(send) + "\n    " + part_text(recv) + "\n");
        }
        MatchedOp op;
        op.func = Func::Send;
        op.type = send.args.type;
        op.count = send.args.count;
        op.parts = {send.args, recv.args};
        const Timing timing = p2p_time(op.count * type_size(op.type), send.comm->device, recv.comm->device);
        enqueue_parts(op, {send.comm, recv.comm}, timing, clique.id);
        settle(send.ticket);
        settle(recv.ticket);
        sends.pop_front();
        recvs.pop_front();
        ++reg.progress;
        notify_progress();
    }
}

}  // namespace

void post_operation(ncclComm* comm, const OpArgs& args, const std::shared_ptr<Ticket>& ticket) {
    check_at_exit();
    ++registry().progress;
    Clique& clique = *comm->clique;
    Posted posted;
    posted.args = args;
    posted.args.posted_at_us = rt::host_clock();
    posted.comm = comm;
    posted.ticket = ticket;
    ++ticket->outstanding;
    if (args.func == Func::Send || args.func == Func::Recv) {
        posted.seq = ++comm->p2p_posted;
        const int from = args.func == Func::Send ? comm->rank : args.root;
        const int to = args.func == Func::Send ? args.root : comm->rank;
        (args.func == Func::Send ? clique.sends : clique.recvs)[{from, to}].push_back(std::move(posted));
        match_pair(clique, from, to);
        return;
    }
    posted.seq = ++comm->collectives_posted;
    clique.collectives[comm->rank].push_back(std::move(posted));
    match_collectives(clique);
}

namespace {

std::string bus_id(int device) {
    return mgpu::sim::pci_bus_id(rt::runtime().machine.devices[device]);
}

void complete_init(std::vector<InitRequest>& joined) {
    Registry& reg = registry();
    const int nranks = joined.front().nranks;
    std::vector<const InitRequest*> by_rank(nranks, nullptr);
    for (const InitRequest& request : joined) by_rank[request.rank] = &request;
    // NCCL refuses two ranks of one communicator on the same GPU.
    std::string duplicate;
    for (int a = 0; a < nranks && duplicate.empty(); ++a)
        for (int b = a + 1; b < nranks && duplicate.empty(); ++b)
            if (by_rank[a]->comm->device == by_rank[b]->comm->device)
                duplicate = "Duplicate GPU detected : rank " + std::to_string(a) + " and rank " + std::to_string(b) +
                            " both on CUDA device " + bus_id(by_rank[a]->comm->device);
    Clique* clique = new_clique(nranks);
    for (int rank = 0; rank < nranks; ++rank) {
        ncclComm* comm = by_rank[rank]->comm;
        comm->clique = clique;
        clique->ranks[rank] = comm;
        if (duplicate.empty()) {
            comm->state = CommState::Ready;
            comm->async_error = ncclSuccess;
        } else {
            comm->state = CommState::Failed;
            comm->async_error = ncclInvalidUsage;
            set_last_error(comm, duplicate);
            by_rank[rank]->ticket->result = ncclInvalidUsage;
        }
        settle(by_rank[rank]->ticket);
    }
    ++reg.progress;
    notify_progress();
}

}  // namespace

void post_init(InitRequest request) {
    check_at_exit();
    Registry& reg = registry();
    ++reg.progress;
    if (reg.used_ids.count(request.id) != 0) {
        stop_program("rank " + std::to_string(request.rank) + " joined a unique id that has already made a "
                         "communicator (" + request.api_name + " at " + where_text(request.site) +
                         "). Each communicator needs a fresh ncclGetUniqueId: the id's root serves one communicator "
                         "and is gone afterwards. On GPUs this hangs or fails.",
                     "");
    }
    auto& joined = reg.pending_inits[request.id];
    ++request.ticket->outstanding;
    for (const InitRequest& other : joined) {
        if (other.nranks != request.nranks) {
            stop_program("ranks disagree on the size of one communicator: rank " + std::to_string(other.rank) +
                             " called " + other.api_name + " with nranks=" + std::to_string(other.nranks) +
                             ", rank " + std::to_string(request.rank) + " with nranks=" +
                             std::to_string(request.nranks) + " for the same unique id. On GPUs this hangs.",
                         "    rank " + std::to_string(other.rank) + " at " + where_text(other.site) + "\n    rank " +
                             std::to_string(request.rank) + " at " + where_text(request.site) + "\n");
        }
        if (other.rank == request.rank) {
            stop_program("rank " + std::to_string(request.rank) + " joined the same unique id twice (" +
                             request.api_name + " at " + where_text(other.site) + " and at " +
                             where_text(request.site) + "). Each communicator needs a fresh ncclGetUniqueId, and "
                             "each rank of it one call. On GPUs this hangs or fails.",
                         "");
        }
    }
    joined.push_back(std::move(request));
    if (static_cast<int>(joined.size()) < joined.front().nranks) return;
    std::vector<InitRequest> complete = std::move(joined);
    reg.pending_inits.erase(complete.front().id);
    reg.used_ids.insert(complete.front().id);
    complete_init(complete);
}

void post_split(std::unique_ptr<SplitRequest> request) {
    Registry& reg = registry();
    Clique& parent = *request->parent->clique;
    const int rank = request->parent->rank;
    ++request->ticket->outstanding;
    if (parent.splits[rank]) {
        stop_program("rank " + std::to_string(rank) + " of comm#" + std::to_string(parent.id) +
                         " called ncclCommSplit twice before the other ranks called it once.",
                     "");
    }
    parent.splits[rank] = std::move(request);
    for (const auto& split : parent.splits)
        if (!split) return;
    // Every rank has called: one child per color, ranks ordered by key, then by parent rank.
    std::map<int, std::vector<SplitRequest*>> by_color;
    for (const auto& split : parent.splits)
        if (split->color != NCCL_SPLIT_NOCOLOR) by_color[split->color].push_back(split.get());
    for (auto& [color, members] : by_color) {
        std::stable_sort(members.begin(), members.end(),
                         [](const SplitRequest* a, const SplitRequest* b) { return a->key < b->key; });
        const int n = static_cast<int>(members.size());
        Clique* child = new_clique(n);
        for (int r = 0; r < n; ++r) {
            ncclComm* comm = new_comm(r, n, members[r]->parent->device);
            comm->clique = child;
            comm->blocking = members[r]->blocking;
            comm->state = CommState::Ready;
            comm->async_error = ncclSuccess;
            child->ranks[r] = comm;
            *members[r]->result = comm;
        }
    }
    for (auto& split : parent.splits) {
        if (split->color == NCCL_SPLIT_NOCOLOR) *split->result = nullptr;
        settle(split->ticket);
        split.reset();
    }
    ++parent.split_round;
    ++reg.progress;
    notify_progress();
}

}  // namespace mgpu::sim::nccl
