// Versions, error texts, NCCL's memory allocation and buffer registration, and made reduction
// operations (ncclRedOpCreatePreMulSum).
#include "element_types.h"
#include "group_state.h"
#include "memory/memory.h"

using mgpu::sim::Site;
using namespace mgpu::sim::nccl;
namespace rt = mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

// NCCL may round an allocation up; the simulator rounds to its own allocation granularity.
constexpr std::size_t kMemAllocGranularity = 2u << 20;

}  // namespace

ncclResult_t ncclGetVersion(int* version, Site site) {
    rt::ApiCall call("ncclGetVersion", site);
    if (version == nullptr) return finish(call, ncclInvalidArgument);
    *version = NCCL_VERSION_CODE;
    return finish(call, ncclSuccess);
}

const char* ncclGetErrorString(ncclResult_t result, Site) {
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char* ncclGetLastError(ncclComm_t comm, Site) {
    std::lock_guard<std::recursive_mutex> lock(rt::runtime().mutex);
    if (comm != nullptr && known_comm(comm)) return comm->last_error.c_str();
    return process_last_error().c_str();
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size, Site site) {
    rt::ApiCall call("ncclMemAlloc", site);
    call.arg("size", static_cast<long long>(size));
    if (ptr == nullptr) return finish(call, ncclInvalidArgument);
    const int device = rt::current_device();
    if (rt::context_status(device) != cudaSuccess) return finish(call, ncclUnhandledCudaError);
    const std::size_t rounded = (std::max<std::size_t>(size, 1) + kMemAllocGranularity - 1) / kMemAllocGranularity *
                                kMemAllocGranularity;
    void* memory = mem::device_alloc(device, rounded, site);
    if (memory == nullptr) {
        set_last_error(nullptr, "Cuda failure 'out of memory' in ncclMemAlloc");
        return finish(call, ncclUnhandledCudaError);
    }
    registry().mem_allocations[memory] = rounded;
    *ptr = memory;
    call.set_output(rt::hex_pointer(memory));
    return finish(call, ncclSuccess);
}

ncclResult_t ncclMemFree(void* ptr, Site site) {
    rt::ApiCall call("ncclMemFree", site);
    call.arg("ptr", static_cast<const void*>(ptr));
    if (ptr == nullptr) return finish(call, ncclSuccess);
    auto& allocations = registry().mem_allocations;
    auto found = allocations.find(ptr);
    if (found == allocations.end()) return finish(call, ncclInvalidArgument);
    allocations.erase(found);
    mem::device_free(ptr);
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle, Site site) {
    rt::ApiCall call("ncclCommRegister", site);
    arg_comm(call, "comm", comm);
    call.arg("buff", static_cast<const void*>(buff)).arg("size", static_cast<long long>(size));
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return finish(call, state);
    if (buff == nullptr || handle == nullptr) return finish(call, ncclInvalidArgument);
    // Registration only lets NCCL skip copies on real GPUs; here the handle is the buffer.
    comm->registrations[buff] = size;
    *handle = buff;
    return finish(call, ncclSuccess);
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle, Site site) {
    rt::ApiCall call("ncclCommDeregister", site);
    arg_comm(call, "comm", comm);
    call.arg("handle", static_cast<const void*>(handle));
    if (!known_comm(comm) || comm->state == CommState::Destroyed || comm->state == CommState::Aborted)
        return finish(call, ncclInvalidArgument);
    if (comm->registrations.erase(handle) == 0) return finish(call, ncclInvalidArgument);
    return finish(call, ncclSuccess);
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm, Site site) {
    rt::ApiCall call("ncclRedOpCreatePreMulSum", site);
    arg_comm(call, "comm", comm);
    call.arg("scalar", static_cast<const void*>(scalar)).arg("datatype", datatype).arg("residence", residence);
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return finish(call, state);
    if (op == nullptr || scalar == nullptr || !valid_type(datatype) ||
        (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)) {
        set_last_error(comm, "ncclRedOpCreatePreMulSum : invalid op, scalar, datatype or residence");
        return finish(call, ncclInvalidArgument);
    }
    Reduction reduction;
    reduction.base = ncclSum;
    reduction.premultiply = true;
    if (residence == ncclScalarHostImmediate) {
        if (mem::device_of(scalar) >= 0) {
            set_last_error(comm, "ncclRedOpCreatePreMulSum : a host-immediate scalar must be in host memory");
            return finish(call, ncclInvalidArgument);
        }
        reduction.host_scalar = element_value(scalar, datatype);
    } else {
        reduction.scalar_on_device = true;
        reduction.device_scalar = scalar;
    }
    const int id = comm->next_custom_op++;
    comm->custom_ops[id] = reduction;
    comm->custom_op_types[id] = datatype;
    *op = static_cast<ncclRedOp_t>(id);
    remember(comm, "ncclRedOpCreatePreMulSum() -> op " + std::to_string(id), site);
    call.set_output("op " + std::to_string(id));
    return finish(call, ncclSuccess);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm, Site site) {
    rt::ApiCall call("ncclRedOpDestroy", site);
    arg_comm(call, "comm", comm);
    call.arg("op", op);
    if (ncclResult_t state = usable(comm); state != ncclSuccess) return finish(call, state);
    if (comm->custom_ops.erase(op) == 0) {
        set_last_error(comm, "ncclRedOpDestroy : op " + std::to_string(op) + " was not made by ncclRedOpCreatePreMulSum "
                                                                             "on this communicator");
        return finish(call, ncclInvalidArgument);
    }
    comm->custom_op_types.erase(op);
    return finish(call, ncclSuccess);
}
