#include "comm_state.h"

#include <algorithm>

#include "element_types.h"

namespace mgpu::sim::nccl {

namespace {

constexpr std::size_t kHistoryLength = 8;

}  // namespace

const char* func_name(Func func) {
    switch (func) {
    case Func::AllReduce: return "ncclAllReduce";
    case Func::Broadcast: return "ncclBroadcast";
    case Func::Reduce: return "ncclReduce";
    case Func::AllGather: return "ncclAllGather";
    case Func::ReduceScatter: return "ncclReduceScatter";
    case Func::AlltoAll: return "ncclAlltoAll";
    case Func::Gather: return "ncclGather";
    case Func::Scatter: return "ncclScatter";
    case Func::Send: return "ncclSend";
    case Func::Recv: return "ncclRecv";
    }
    return "nccl?";
}

bool is_p2p(Func func) { return func == Func::Send || func == Func::Recv; }

bool takes_op(Func func) { return func == Func::AllReduce || func == Func::Reduce || func == Func::ReduceScatter; }

bool takes_root(Func func) {
    return func == Func::Broadcast || func == Func::Reduce || func == Func::Gather || func == Func::Scatter;
}

std::string describe(const OpArgs& args) {
    std::string text = std::string(func_name(args.func)) + "(count=" + std::to_string(args.count) + ", " +
                       type_name(args.type);
    if (takes_op(args.func)) text += std::string(", ") + op_name(args.op);
    if (takes_root(args.func)) text += ", root=" + std::to_string(args.root);
    if (args.func == Func::Send) text += ", to rank " + std::to_string(args.root);
    if (args.func == Func::Recv) text += ", from rank " + std::to_string(args.root);
    return text + ")";
}

std::string where_text(const Site& site) {
    if (site.file == nullptr || *site.file == '\0') return "an unknown place";
    return std::string(site.file) + ":" + std::to_string(site.line);
}

Registry& registry() {
    static Registry* instance = new Registry();   // never destroyed: host threads may outlive main
    rt::Runtime& r = rt::runtime();
    if (instance->generation != r.generation) {
        // Communicators of an earlier machine stay allocated (handles are never reused) but are
        // no longer known.
        static std::vector<std::unique_ptr<Registry>> retired;
        auto fresh = std::make_unique<Registry>();
        fresh->generation = r.generation;
        std::swap(*fresh, *instance);
        retired.push_back(std::move(fresh));
    }
    return *instance;
}

ncclComm* new_comm(int rank, int nranks, int device) {
    Registry& reg = registry();
    auto comm = std::make_unique<ncclComm>();
    comm->generation = reg.generation;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->device = device;
    reg.comms.push_back(std::move(comm));
    return reg.comms.back().get();
}

Clique* new_clique(int nranks) {
    Registry& reg = registry();
    auto clique = std::make_unique<Clique>();
    clique->id = reg.next_clique++;
    clique->nranks = nranks;
    clique->ranks.assign(nranks, nullptr);
    clique->collectives.resize(nranks);
    clique->splits.resize(nranks);
    reg.cliques.push_back(std::move(clique));
    return reg.cliques.back().get();
}

bool known_comm(const ncclComm* comm) {
    if (comm == nullptr) return false;
    const Registry& reg = registry();
    return std::any_of(reg.comms.begin(), reg.comms.end(), [&](const auto& owned) { return owned.get() == comm; });
}

ncclResult_t usable(ncclComm* comm) {
    if (!known_comm(comm)) {
        set_last_error(nullptr, "invalid communicator (null, or not made by this machine)");
        return ncclInvalidArgument;
    }
    switch (comm->state) {
    case CommState::Ready: return ncclSuccess;
    case CommState::Initializing:
        set_last_error(comm, "Attempt to use communicator before the previous operation returned ncclSuccess");
        return ncclInvalidUsage;
    case CommState::Failed:
        set_last_error(comm, "communicator failed to initialise: abort and create it again");
        return comm->async_error == ncclSuccess ? ncclInvalidUsage : comm->async_error;
    case CommState::Finalized:
        set_last_error(comm, "communicator has been finalized");
        return ncclInvalidUsage;
    case CommState::Destroyed:
    case CommState::Aborted:
        set_last_error(comm, "communicator has already been destroyed");
        return ncclInvalidArgument;
    }
    return ncclInternalError;
}

void remember(ncclComm* comm, const std::string& text, Site site) {
    if (comm == nullptr) return;
    comm->history.push_back(CallRecord{text, site, rt::host_thread_id()});
    if (comm->history.size() > kHistoryLength) comm->history.erase(comm->history.begin());
}

std::string& process_last_error() {
    static std::string text;
    return text;
}

bool& last_error_set_in_this_call() {
    thread_local bool set = false;
    return set;
}

void set_last_error(ncclComm* comm, const std::string& message) {
    process_last_error() = message;
    if (comm != nullptr) comm->last_error = message;
    last_error_set_in_this_call() = true;
}

}  // namespace mgpu::sim::nccl
