// The collectives, send and receive, and groups: arguments checked as NCCL checks them (a bad
// argument is reported at once, and the group it was called in then launches nothing at its
// outermost ncclGroupEnd), then the call is held in the open group or launched at once.
#include <utility>

#include "element_types.h"
#include "group_state.h"
#include "hang_watch.h"
#include "memory/memory.h"
#include "rendezvous.h"

using mgpu::sim::Site;
using namespace mgpu::sim::nccl;
namespace rt = mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

// NCCL binds a communicator to its device: stream 0 is that device's legacy stream, and a
// stream of another device fails in CUDA ("invalid resource handle").
CUstream_st* comm_stream(ncclComm* comm, cudaStream_t stream) {
    rt::Runtime& r = rt::runtime();
    if (stream == nullptr || stream == cudaStreamLegacy) return rt::legacy_stream(comm->device);
    if (stream == cudaStreamPerThread) return rt::per_thread_stream(comm->device);
    auto it = r.streams.find(stream);
    if (it == r.streams.end() || it->second->device != comm->device) return nullptr;
    return it->second.get();
}

// Pointers a kernel of the communicator's device can use: device memory, or page-locked host memory.
bool reachable(const void* pointer) {
    if (mem::device_of(pointer) >= 0) return mem::find_device(pointer).has_value();
    return mem::find_host(pointer).has_value();
}

ncclResult_t resolve_reduction(ncclComm* comm, OpArgs& args) {
    Reduction& reduction = args.reduction;
    if (args.op >= 0 && args.op < ncclNumOps) {
        reduction.base = args.op;
        if (args.op == ncclAvg) {
            reduction.base = ncclSum;
            // NCCL divides integers after summing and multiplies floats by 1/n before summing.
            if (is_floating(args.type)) {
                reduction.premultiply = true;
                reduction.host_scalar = 1.0 / comm->nranks;
            } else {
                reduction.divide_by_ranks = true;
            }
        }
        return ncclSuccess;
    }
    auto found = comm->custom_ops.find(args.op);
    if (found == comm->custom_ops.end()) {
        set_last_error(comm, "Invalid op " + std::to_string(args.op) + " for this communicator");
        return ncclInvalidArgument;
    }
    if (comm->custom_op_types[args.op] != args.type) {
        set_last_error(comm, "op " + std::to_string(args.op) + " was created for another datatype");
        return ncclInvalidArgument;
    }
    reduction = found->second;
    return ncclSuccess;
}

ncclResult_t check(ncclComm* comm, OpArgs& args, cudaStream_t stream) {
    if (comm == nullptr) {
        set_last_error(nullptr, std::string(func_name(args.func)) + " : comm argument is NULL");
        return ncclInvalidArgument;
    }
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return state;
    if (!valid_type(args.type)) {
        set_last_error(comm, "Invalid datatype " + std::to_string(args.type));
        return ncclInvalidArgument;
    }
    if (takes_root(args.func) || mgpu::sim::nccl::is_p2p(args.func)) {
        if (args.root < 0 || args.root >= comm->nranks) {
            set_last_error(comm, std::string(takes_root(args.func) ? "Invalid root " : "Invalid peer ") +
                                     std::to_string(args.root) + ", nranks " + std::to_string(comm->nranks));
            return ncclInvalidArgument;
        }
    }
    if (takes_op(args.func))
        if (ncclResult_t result = resolve_reduction(comm, args); result != ncclSuccess) return result;
    args.stream = comm_stream(comm, stream);
    if (args.stream == nullptr) {
        set_last_error(comm, "Cuda failure 'invalid resource handle': the stream is not a live stream of device " +
                                 std::to_string(comm->device));
        return ncclUnhandledCudaError;
    }
    if (args.count == 0) return ncclSuccess;
    // Which buffers this rank really uses: the root's alone for some.
    const bool uses_send = args.func != Func::Recv && (args.func != Func::Broadcast || comm->rank == args.root) &&
                           (args.func != Func::Scatter || comm->rank == args.root);
    const bool uses_recv = args.func != Func::Send && (args.func != Func::Reduce || comm->rank == args.root) &&
                           (args.func != Func::Gather || comm->rank == args.root);
    for (auto [used, pointer, name] : {std::tuple{uses_send, static_cast<const void*>(args.send), "sendbuff"},
                                       std::tuple{uses_recv, static_cast<const void*>(args.recv), "recvbuff"}}) {
        if (!used) continue;
        if (pointer == nullptr) {
            set_last_error(comm, std::string("Cuda failure: ") + name + " is NULL");
            return ncclUnhandledCudaError;
        }
        if (!reachable(pointer)) {
            set_last_error(comm, std::string(func_name(args.func)) + " : " + name + " " + rt::hex_pointer(pointer) +
                                     " is not a valid pointer (neither device memory nor page-locked host memory)");
            return ncclInvalidArgument;
        }
    }
    if (args.func == Func::AlltoAll && args.send == args.recv) {
        set_last_error(comm, "ncclAlltoAll does not support in-place operation");
        return ncclInvalidArgument;
    }
    return ncclSuccess;
}

ncclResult_t submit(const char* name, OpArgs args, ncclComm* comm, cudaStream_t stream, Site site) {
    rt::ApiCall call(name, site, rt::HostCost::Launch);
    call.arg("sendbuff", args.send).arg("recvbuff", static_cast<const void*>(args.recv));
    call.arg("count", static_cast<long long>(args.count));
    call.arg_named("datatype", args.type, valid_type(args.type) ? type_name(args.type) : std::to_string(args.type).c_str());
    if (takes_op(args.func)) call.arg_named("op", args.op, op_name(args.op));
    if (takes_root(args.func)) call.arg("root", args.root);
    if (mgpu::sim::nccl::is_p2p(args.func)) call.arg("peer", args.root);
    arg_comm(call, "comm", comm);
    call.arg("stream", static_cast<const void*>(stream));
    if (known_comm(comm)) call.on_stream(stream == nullptr ? nullptr : stream, false);

    args.site = site;
    args.host_thread = rt::host_thread_id();
    args.api_seq = rt::runtime().next_api_seq - 1;
    const ncclResult_t result = check(comm, args, stream);
    if (known_comm(comm)) remember(comm, describe(args), site);
    GroupState& current = group();
    if (result != ncclSuccess) {
        if (current.depth > 0) {   // NCCL keeps the latest refusal
            current.refused = result;
            current.refused_reason = last_error_set_in_this_call() ? process_last_error() : std::string();
        }
        return finish(call, result);
    }
    rt::ensure_context(comm->device);
    if (current.depth > 0) {
        current.operations.emplace_back(comm, args);
        return finish(call, ncclSuccess);
    }
    GroupState single;
    single.operations.emplace_back(comm, args);
    return finish(call, launch(single, std::string(name) + " at " + where_text(site)));
}

OpArgs make(Func func, const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op, int root) {
    OpArgs args;
    args.func = func;
    args.send = send;
    args.recv = recv;
    args.count = count;
    args.type = type;
    args.op = op;
    args.root = root;
    return args;
}

}  // namespace

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclAllReduce", make(Func::AllReduce, sendbuff, recvbuff, count, datatype, op, -1), comm, stream,
                  site);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclBroadcast", make(Func::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root), comm,
                  stream, site);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream, Site site) {
    return submit("ncclBcast", make(Func::Broadcast, buff, buff, count, datatype, ncclSum, root), comm, stream, site);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclReduce", make(Func::Reduce, sendbuff, recvbuff, count, datatype, op, root), comm, stream, site);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclAllGather", make(Func::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1), comm,
                  stream, site);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclReduceScatter", make(Func::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1), comm,
                  stream, site);
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream, Site site) {
    return submit("ncclAlltoAll", make(Func::AlltoAll, sendbuff, recvbuff, count, datatype, ncclSum, -1), comm, stream,
                  site);
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclGather", make(Func::Gather, sendbuff, recvbuff, count, datatype, ncclSum, root), comm, stream,
                  site);
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream, Site site) {
    return submit("ncclScatter", make(Func::Scatter, sendbuff, recvbuff, count, datatype, ncclSum, root), comm, stream,
                  site);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream, Site site) {
    return submit("ncclSend", make(Func::Send, sendbuff, nullptr, count, datatype, ncclSum, peer), comm, stream, site);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream, Site site) {
    return submit("ncclRecv", make(Func::Recv, nullptr, recvbuff, count, datatype, ncclSum, peer), comm, stream, site);
}

ncclResult_t ncclGroupStart(Site site) {
    rt::ApiCall call("ncclGroupStart", site);
    ++group().depth;
    return finish(call, ncclSuccess);
}

ncclResult_t ncclGroupEnd(Site site) {
    rt::ApiCall call("ncclGroupEnd", site, rt::HostCost::Launch);
    GroupState& current = group();
    if (current.depth == 0) {
        set_last_error(nullptr, "ncclGroupEnd: not in a group call");
        return finish(call, ncclInvalidUsage);
    }
    if (--current.depth > 0) return finish(call, ncclSuccess);
    const ncclResult_t refused = std::exchange(current.refused, ncclSuccess);
    if (refused != ncclSuccess && current.inits.empty()) {
        if (!current.refused_reason.empty()) call.set_reason(current.refused_reason);
        current = GroupState{};
        return finish(call, refused);
    }
    if (!current.inits.empty() && (!current.operations.empty() || !current.splits.empty())) {
        current = GroupState{};
        set_last_error(nullptr, "ncclGroupEnd: communicator initialisation cannot be grouped with other operations");
        return finish(call, ncclInvalidUsage);
    }
    return finish(call, launch(current, "ncclGroupEnd at " + where_text(site)));
}
