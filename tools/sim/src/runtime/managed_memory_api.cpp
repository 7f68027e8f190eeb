// Managed memory: cudaMallocManaged, cudaMemPrefetchAsync, cudaMemAdvise, cudaStreamAttachMemAsync.
//
// The model: managed memory is host memory that every device's kernels may reach (like page-locked
// memory), so host code reads and writes it directly and a kernel on any device sees the same
// bytes, which is what the programs observe on a machine with concurrentManagedAccess (every
// preset's GPUs). Page migration is not modelled: prefetches and advice are checked as CUDA checks
// them but move nothing, and kernels reach managed memory at the host
// link's speed, so timings of managed-memory programs are pessimistic.
#include "api_call.h"
#include "cuda_runtime_api.h"
#include "memory/memory.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

bool is_managed(const void* p, std::size_t count) {
    auto range = mem::find_host(p);
    return range && (range->flags & mem::kManagedMemory) != 0 &&
           reinterpret_cast<std::uintptr_t>(p) + count <= range->base + range->size;
}

// A location names the host or a device that exists.
bool valid_location(const cudaMemLocation& location) {
    switch (location.type) {
    case cudaMemLocationTypeDevice: return valid_device(location.id);
    case cudaMemLocationTypeHost: return true;
    case cudaMemLocationTypeHostNuma: return location.id == 0;
    case cudaMemLocationTypeHostNumaCurrent: return true;
    default: return false;
    }
}

}  // namespace

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags, Site site) {
    ApiCall call("cudaMallocManaged", site);
    call.arg("size", static_cast<long long>(size)).arg("flags", flags);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (devPtr == nullptr || (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost))
        return call.done(cudaErrorInvalidValue);
    if (size == 0) {   // as cudaMalloc: success and a null pointer
        *devPtr = nullptr;
        return call.done(cudaSuccess);
    }
    void* p = mem::host_alloc(size, mem::kManagedMemory | flags);
    *devPtr = p;
    call.set_output(hex_pointer(p));
    return call.done(p ? cudaSuccess : cudaErrorMemoryAllocation);
}

namespace {

cudaError_t prefetch(const void* devPtr, size_t count, cudaMemLocation location, unsigned int flags,
                     cudaStream_t stream, bool per_thread_default, Site site) {
    ApiCall call("cudaMemPrefetchAsync", site);
    call.arg("devPtr", devPtr).arg("count", static_cast<long long>(count));
    call.arg("location.type", location.type).arg("location.id", location.id).arg("flags", flags);
    call.arg_stream("stream", stream, per_thread_default);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    if (flags != 0 || !valid_location(location) || !is_managed(devPtr, count)) return call.done(cudaErrorInvalidValue);
    return call.done(cudaSuccess);   // the bytes are already where every device reaches them
}

cudaError_t attach(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags, bool per_thread_default,
                   Site site) {
    ApiCall call("cudaStreamAttachMemAsync", site);
    call.arg_stream("stream", stream, per_thread_default).arg("devPtr", devPtr);
    call.arg("length", static_cast<long long>(length)).arg("flags", flags);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    const bool one_flag = flags == cudaMemAttachGlobal || flags == cudaMemAttachHost || flags == cudaMemAttachSingle;
    if (!one_flag || !is_managed(devPtr, length == 0 ? 1 : length)) return call.done(cudaErrorInvalidValue);
    // Only a whole allocation may be attached (length 0 or its full size).
    auto range = mem::find_host(devPtr);
    if (range->base != reinterpret_cast<std::uintptr_t>(devPtr) || (length != 0 && length != range->size))
        return call.done(cudaErrorInvalidValue);
    return call.done(cudaSuccess);
}

}  // namespace

cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream, Site site) {
    return prefetch(devPtr, count, location, flags, stream, false, site);
}
cudaError_t mgpu_ptds_cudaMemPrefetchAsync(const void* devPtr, size_t count, cudaMemLocation location,
                                           unsigned int flags, cudaStream_t stream, Site site) {
    return prefetch(devPtr, count, location, flags, stream, true, site);
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags, Site site) {
    return attach(stream, devPtr, length, flags, false, site);
}
cudaError_t mgpu_ptds_cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length, unsigned int flags,
                                               Site site) {
    return attach(stream, devPtr, length, flags, true, site);
}

cudaError_t cudaMemAdvise(const void* devPtr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location,
                          Site site) {
    ApiCall call("cudaMemAdvise", site);
    call.arg("devPtr", devPtr).arg("count", static_cast<long long>(count)).arg("advice", advice);
    call.arg("location.type", location.type).arg("location.id", location.id);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy)
        return call.done(cudaErrorInvalidValue);
    // Read-mostly advice names no location; the others need one.
    const bool needs_location = advice != cudaMemAdviseSetReadMostly && advice != cudaMemAdviseUnsetReadMostly;
    if ((needs_location && !valid_location(location)) || !is_managed(devPtr, count))
        return call.done(cudaErrorInvalidValue);
    return call.done(cudaSuccess);
}
