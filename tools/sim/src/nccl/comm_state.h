// Communicators as data: each rank's ncclComm, the clique its ranks share (where operations
// posted by different ranks meet), and the per-process registry that holds them. Everything
// here is guarded by the runtime's mutex, like the rest of the simulator.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mgpu/sim/site.h"
#include "nccl.h"
#include "runtime/runtime_state.h"

namespace mgpu::sim::nccl {

enum class Func { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter, Send, Recv };

const char* func_name(Func func);   // "ncclAllReduce"
bool is_p2p(Func func);
bool takes_op(Func func);
bool takes_root(Func func);

// A reduction as it runs: a built-in operation, or a sum whose inputs are first multiplied by a
// scalar (ncclRedOpCreatePreMulSum, and ncclAvg on floating types).
struct Reduction {
    ncclRedOp_t base = ncclSum;                 // ncclSum for a pre-multiplied sum
    bool premultiply = false;
    bool scalar_on_device = false;
    double host_scalar = 1.0;                   // as the value it holds (scalar read during the call)
    const void* device_scalar = nullptr;        // read when the operation runs
    bool divide_by_ranks = false;               // ncclAvg on integer types: sum, then divide
};

// One rank's part of one operation, as its call gave it.
struct OpArgs {
    Func func = Func::AllReduce;
    const void* send = nullptr;
    void* recv = nullptr;
    std::size_t count = 0;
    ncclDataType_t type = ncclFloat32;
    ncclRedOp_t op = ncclSum;
    int root = -1;                              // the root rank, or the peer of a send or receive
    Reduction reduction;
    CUstream_st* stream = nullptr;
    Site site;
    int host_thread = 0;
    std::uint64_t api_seq = 0;
    double posted_at_us = 0;                    // the poster's host clock when it was launched
    // Sends and receives of one group run side by side on a stream, as NCCL runs them in one
    // kernel: their modelled start follows what the stream held when the group was launched.
    bool timed_from_launch = false;
    std::vector<std::uint64_t> launch_deps;
};

std::string describe(const OpArgs& args);   // "ncclAllReduce(count=8, ncclFloat32, ncclSum)"
std::string where_text(const Site& site);   // "main.cu:12"

// What a waiting host thread is waiting for: how many of the operations it posted are not yet
// matched by every rank they involve.
struct Ticket {
    int outstanding = 0;
    ncclResult_t result = ncclSuccess;
};

struct Clique;

// A rank's operation posted and waiting for its partners.
struct Posted {
    OpArgs args;
    ncclComm* comm = nullptr;
    std::shared_ptr<Ticket> ticket;
    std::uint64_t seq = 0;     // the rank's collective number (1, 2, ...) or p2p number
};

// A ncclCommSplit call waiting for the other ranks of its parent.
struct SplitRequest {
    ncclComm* parent = nullptr;
    int color = 0;
    int key = 0;
    ncclComm_t* result = nullptr;
    bool blocking = true;
    std::shared_ptr<Ticket> ticket;
    Site site;
    int host_thread = 0;
};

// A ncclCommInitRank call waiting for the other ranks of its unique id.
struct InitRequest {
    ncclComm* comm = nullptr;
    std::string id;              // the unique id's bytes
    int nranks = 0;
    int rank = 0;
    std::shared_ptr<Ticket> ticket;
    Site site;
    int host_thread = 0;
    std::string api_name;
};

struct Clique {
    std::uint64_t id = 0;                       // comm#id in messages and the trace
    int nranks = 0;
    std::vector<ncclComm*> ranks;               // by rank
    std::vector<std::deque<Posted>> collectives;           // per rank, posted and not matched, oldest first
    std::map<std::pair<int, int>, std::deque<Posted>> sends;   // (from, to)
    std::map<std::pair<int, int>, std::deque<Posted>> recvs;   // (from, to)
    std::uint64_t matched_collectives = 0;
    std::vector<std::unique_ptr<SplitRequest>> splits;      // by rank, while a split is gathering
    int split_round = 0;
};

enum class CommState { Initializing, Ready, Failed, Finalized, Destroyed, Aborted };

// One entry of a rank's recent history, for diagnoses.
struct CallRecord {
    std::string text;
    Site site;
    int host_thread = 0;
};

}  // namespace mgpu::sim::nccl

// The object behind ncclComm_t.
struct ncclComm {
    std::uint64_t generation = 0;               // the machine it was made on
    mgpu::sim::nccl::Clique* clique = nullptr;
    int rank = 0;
    int nranks = 0;
    int device = 0;
    bool blocking = true;
    mgpu::sim::nccl::CommState state = mgpu::sim::nccl::CommState::Initializing;
    ncclResult_t async_error = ncclInProgress;
    std::string last_error;
    std::uint64_t collectives_posted = 0;
    std::uint64_t p2p_posted = 0;
    std::uint64_t last_op = 0;                  // the newest device operation of this rank
    std::vector<mgpu::sim::nccl::CallRecord> history;   // recent calls, newest last
    std::map<int, mgpu::sim::nccl::Reduction> custom_ops;   // live ncclRedOpCreatePreMulSum ops
    std::map<int, ncclDataType_t> custom_op_types;
    int next_custom_op = ncclNumOps;
    std::map<const void*, std::size_t> registrations;       // ncclCommRegister handles
    std::vector<std::uint64_t> stuck_ops;       // this rank's parts of a failed operation (ncclCommAbort ends them)
};

namespace mgpu::sim::nccl {

struct Registry {
    std::uint64_t generation = 0;
    std::uint64_t next_clique = 1;
    std::uint64_t next_unique_id = 1;
    // Communicators are never freed, so a destroyed one is recognised when used again.
    std::vector<std::unique_ptr<ncclComm>> comms;
    std::vector<std::unique_ptr<Clique>> cliques;
    std::map<void*, std::size_t> mem_allocations;   // ncclMemAlloc
    std::map<std::string, std::vector<InitRequest>> pending_inits;   // by unique id, in arrival order
    // Unique ids whose communicator is complete. NCCL's root for an id serves one communicator and
    // then goes away, so ranks that join a used id again wait for a root that is gone.
    std::set<std::string> used_ids;
    std::uint64_t progress = 0;                      // bumped whenever posted work is matched
    int matched_ops = 0;                             // operations matched since reset (Faults::nccl_fails_at)
};

// The registry for the machine that is up now; a new machine (reset) starts an empty one.
Registry& registry();

ncclComm* new_comm(int rank, int nranks, int device);
Clique* new_clique(int nranks);

// Whether the handle is a communicator this machine made. Others are neither read nor written.
bool known_comm(const ncclComm* comm);

// The comm's state allows new operations: initialised and neither finalised nor destroyed.
ncclResult_t usable(ncclComm* comm);

// Records a call in the comm's history and, with a failure, as its last error.
void remember(ncclComm* comm, const std::string& text, Site site);
void set_last_error(ncclComm* comm, const std::string& message);
// The text of the newest failure, for ncclGetLastError(NULL).
std::string& process_last_error();
// Whether set_last_error ran on this thread since the last NCCL call finished (finish() clears it):
// the last error is then this call's reason.
bool& last_error_set_in_this_call();

}  // namespace mgpu::sim::nccl
