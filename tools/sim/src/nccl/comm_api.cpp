// Making, querying and ending communicators.
#include <algorithm>
#include <cstring>
#include <set>

#include "group_state.h"
#include "mgpu/sim/nccl_control.h"
#include "hang_watch.h"
#include "rendezvous.h"
#include "runtime/scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::nccl;
namespace rt = mgpu::sim::rt;

namespace {

// NCCL_CONFIG_INITIALIZER's marks; a structure without them was not initialised.
bool config_initialised(const ncclConfig_t* config) {
    return config->magic == NCCL_CONFIG_MAGIC && config->size >= offsetof(ncclConfig_t, netName);
}

bool config_blocking(const ncclConfig_t* config, bool inherited) {
    if (config == nullptr || config->blocking == NCCL_CONFIG_UNDEF_INT) return inherited;
    return config->blocking != 0;
}

ncclResult_t init_rank(const char* name, ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank,
                       const ncclConfig_t* config, Site site) {
    rt::ApiCall call(name, site);
    call.arg("nranks", nranks).arg("rank", rank);
    if (comm == nullptr) {
        set_last_error(nullptr, std::string(name) + " : comm argument is NULL");
        return finish(call, ncclInvalidArgument);
    }
    if (nranks < 1 || rank < 0 || rank >= nranks) {
        set_last_error(nullptr, "Invalid rank requested : " + std::to_string(rank) + "/" + std::to_string(nranks));
        return finish(call, ncclInvalidArgument);
    }
    if (config != nullptr && !config_initialised(config)) {
        set_last_error(nullptr, "ncclConfig_t was not initialised with NCCL_CONFIG_INITIALIZER");
        return finish(call, ncclInvalidArgument);
    }
    const int device = rt::current_device();
    if (rt::context_status(device) != cudaSuccess) {
        set_last_error(nullptr, "Cuda failure: no usable current device");
        return finish(call, ncclUnhandledCudaError);
    }
    ncclComm* made = new_comm(rank, nranks, device);
    made->blocking = config_blocking(config, true);
    *comm = made;
    remember(made, std::string(name) + "(nranks=" + std::to_string(nranks) + ", rank=" + std::to_string(rank) + ")",
             site);
    InitRequest request;
    request.comm = made;
    request.id.assign(id.internal, sizeof id.internal);
    request.nranks = nranks;
    request.rank = rank;
    request.site = site;
    request.host_thread = rt::host_thread_id();
    request.api_name = name;
    GroupState& current = group();
    if (current.depth > 0) {
        current.inits.push_back(std::move(request));
        return finish(call, ncclSuccess);
    }
    GroupState single;
    single.inits.push_back(std::move(request));
    return finish(call, launch(single, std::string(name) + " at " + where_text(site)));
}

// Waits for the communicator's last operation (the work a finalize flushes).
void flush(rt::ApiCall& call, ncclComm* comm) {
    if (comm->last_op == 0) return;
    rt::run_until_done({comm->last_op});
    call.wait_until(rt::op_end_us(comm->last_op));
}

ncclResult_t query(const char* name, const ncclComm* comm, int* out, int value, Site site) {
    rt::ApiCall call(name, site);
    arg_comm(call, "comm", comm);
    if (comm == nullptr || out == nullptr || !known_comm(comm)) {
        set_last_error(nullptr, std::string(name) + " : argument is NULL or not a communicator");
        return finish(call, ncclInvalidArgument);
    }
    if (comm->state == CommState::Destroyed || comm->state == CommState::Aborted) {
        set_last_error(nullptr, std::string(name) + " : communicator has already been destroyed");
        return finish(call, ncclInvalidArgument);
    }
    *out = value;
    return finish(call, ncclSuccess);
}

}  // namespace

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId, Site site) {
    rt::ApiCall call("ncclGetUniqueId", site);
    if (uniqueId == nullptr) return finish(call, ncclInvalidArgument);
    std::memset(uniqueId->internal, 0, sizeof uniqueId->internal);
    const std::uint64_t number = registry().next_unique_id++;
    std::memcpy(uniqueId->internal, "mgpu-sim", 8);
    std::memcpy(uniqueId->internal + 8, &number, sizeof number);
    call.set_output("id#" + std::to_string(number));
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, Site site) {
    return init_rank("ncclCommInitRank", comm, nranks, commId, rank, nullptr, site);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config,
                                    Site site) {
    return init_rank("ncclCommInitRankConfig", comm, nranks, commId, rank, config, site);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist, Site site) {
    rt::ApiCall call("ncclCommInitAll", site);
    call.arg("ndev", ndev).arg("devlist", static_cast<const void*>(devlist));
    if (comms == nullptr || ndev < 0) {
        set_last_error(nullptr, "ncclCommInitAll : comms is NULL or ndev is negative");
        return finish(call, ncclInvalidArgument);
    }
    if (ndev == 0) return finish(call, ncclSuccess);
    std::vector<int> devices;
    for (int i = 0; i < ndev; ++i) devices.push_back(devlist ? devlist[i] : i);
    for (int device : devices) {
        if (!rt::valid_device(device) || rt::context_status(device) != cudaSuccess) {
            set_last_error(nullptr, "Cuda failure 'invalid device ordinal' for device " + std::to_string(device));
            return finish(call, ncclUnhandledCudaError);
        }
    }
    if (std::set<int>(devices.begin(), devices.end()).size() != devices.size()) {
        set_last_error(nullptr, "ncclCommInitAll : duplicate device in devlist");
        return finish(call, ncclInvalidUsage);
    }
    Clique* clique = new_clique(ndev);
    for (int rank = 0; rank < ndev; ++rank) {
        ncclComm* comm = new_comm(rank, ndev, devices[rank]);
        comm->clique = clique;
        comm->state = CommState::Ready;
        comm->async_error = ncclSuccess;
        clique->ranks[rank] = comm;
        comms[rank] = comm;
        remember(comm, "ncclCommInitAll(ndev=" + std::to_string(ndev) + ")", site);
    }
    ++registry().progress;
    call.set_output("comm#" + std::to_string(clique->id));
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config, Site site) {
    rt::ApiCall call("ncclCommSplit", site);
    arg_comm(call, "comm", comm);
    call.arg("color", color).arg("key", key);
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return finish(call, state);
    if (newcomm == nullptr || (color < 0 && color != NCCL_SPLIT_NOCOLOR) ||
        (config != nullptr && !config_initialised(config))) {
        set_last_error(comm, "ncclCommSplit : invalid newcomm, color or config");
        return finish(call, ncclInvalidArgument);
    }
    remember(comm, "ncclCommSplit(color=" + std::to_string(color) + ", key=" + std::to_string(key) + ")", site);
    auto request = std::make_unique<SplitRequest>();
    request->parent = comm;
    request->color = color;
    request->key = key;
    request->result = newcomm;
    request->blocking = config_blocking(config, comm->blocking);
    request->site = site;
    request->host_thread = rt::host_thread_id();
    GroupState& current = group();
    if (current.depth > 0) {
        current.splits.push_back(std::move(request));
        return finish(call, ncclSuccess);
    }
    GroupState single;
    single.splits.push_back(std::move(request));
    return finish(call, launch(single, "ncclCommSplit at " + where_text(site)));
}

ncclResult_t ncclCommFinalize(ncclComm_t comm, Site site) {
    rt::ApiCall call("ncclCommFinalize", site, rt::HostCost::Sync);
    arg_comm(call, "comm", comm);
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return finish(call, state);
    remember(comm, "ncclCommFinalize()", site);
    flush(call, comm);
    comm->state = CommState::Finalized;
    comm->async_error = ncclSuccess;
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm, Site site) {
    rt::ApiCall call("ncclCommDestroy", site, rt::HostCost::Sync);
    arg_comm(call, "comm", comm);
    if (comm == nullptr) return finish(call, ncclSuccess);
    if (!known_comm(comm) || comm->state == CommState::Destroyed || comm->state == CommState::Aborted) {
        set_last_error(nullptr, "comm " + rt::hex_pointer(comm) + " has already been destroyed");
        return finish(call, ncclInvalidArgument);
    }
    remember(comm, "ncclCommDestroy()", site);
    // Destroy finalizes a communicator the program did not finalize: its work completes first.
    flush(call, comm);
    comm->state = CommState::Destroyed;
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommAbort(ncclComm_t comm, Site site) {
    rt::ApiCall call("ncclCommAbort", site);
    arg_comm(call, "comm", comm);
    if (comm == nullptr) return finish(call, ncclSuccess);
    if (!known_comm(comm) || comm->state == CommState::Destroyed || comm->state == CommState::Aborted) {
        set_last_error(nullptr, "comm " + rt::hex_pointer(comm) + " has already been destroyed");
        return finish(call, ncclInvalidArgument);
    }
    remember(comm, "ncclCommAbort()", site);
    release_failed(comm);
    comm->state = CommState::Aborted;
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError, Site site) {
    rt::ApiCall call("ncclCommGetAsyncError", site);
    arg_comm(call, "comm", comm);
    if (comm == nullptr || asyncError == nullptr || !known_comm(comm)) return finish(call, ncclInvalidArgument);
    if (comm->state == CommState::Destroyed || comm->state == CommState::Aborted)
        return finish(call, ncclInvalidArgument);
    *asyncError = comm->state == CommState::Initializing ? ncclInProgress : comm->async_error;
    if (*asyncError == ncclInProgress) note_poll_in_progress("ncclCommGetAsyncError at " + where_text(site));
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count, Site site) {
    return query("ncclCommCount", comm, count, known_comm(comm) ? comm->nranks : 0, site);
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device, Site site) {
    return query("ncclCommCuDevice", comm, device, known_comm(comm) ? comm->device : 0, site);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank, Site site) {
    return query("ncclCommUserRank", comm, rank, known_comm(comm) ? comm->rank : 0, site);
}

std::size_t mgpu::sim::live_nccl_comms() {
    std::lock_guard<std::recursive_mutex> lock(rt::runtime().mutex);
    std::size_t live = 0;
    for (const auto& comm : registry().comms)
        if (comm->state != CommState::Destroyed && comm->state != CommState::Aborted) ++live;
    return live;
}

std::size_t mgpu::sim::aborted_nccl_comms() {
    std::lock_guard<std::recursive_mutex> lock(rt::runtime().mutex);
    std::size_t aborted = 0;
    for (const auto& comm : registry().comms)
        if (comm->state == CommState::Aborted) ++aborted;
    return aborted;
}
