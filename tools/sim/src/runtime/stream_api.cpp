// Streams: creation with flags and priorities, destruction, synchronisation, queries and
// cross-stream waits on events.
#include <algorithm>

#include "api_call.h"
#include "cuda_runtime_api.h"
#include "device_properties.h"
#include "scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

cudaError_t create_stream(ApiCall& call, cudaStream_t* pStream, unsigned int flags, int priority) {
    Runtime& r = runtime();
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (pStream == nullptr || (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) != 0)
        return call.done(cudaErrorInvalidValue);
    if (++r.stream_creations == r.options.faults.stream_create_fails_at) return call.done(cudaErrorMemoryAllocation);
    auto stream = std::make_unique<CUstream_st>();
    stream->trace_id = r.next_handle_id++;
    stream->device = device;
    stream->flags = flags;
    // Out-of-range priorities are clamped, as documented.
    stream->created_at = call.site();
    stream->priority = std::clamp(priority, kGreatestStreamPriority, kLeastStreamPriority);
    CUstream_st* handle = stream.get();
    r.streams.emplace(handle, std::move(stream));
    *pStream = handle;
    call.set_output("stream#" + std::to_string(handle->trace_id));
    return call.done(cudaSuccess);
}

cudaError_t synchronize_stream(cudaStream_t stream, bool per_thread_default, Site site) {
    ApiCall call("cudaStreamSynchronize", site, HostCost::Sync);
    call.arg_stream("stream", stream, per_thread_default);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    run_until_done({target->last_op});
    call.wait_until(op_end_us(target->last_op));
    return call.done(runtime().devices[target->device].sticky);
}

cudaError_t query_stream(cudaStream_t stream, bool per_thread_default, Site site) {
    ApiCall call("cudaStreamQuery", site);
    call.arg_stream("stream", stream, per_thread_default);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    // Done is decided on the modelled clock, so the answer does not depend on the schedule.
    if (op_end_us(target->last_op) > host_clock()) {
        Runtime& r = runtime();
        if (op_end_us(target->last_op) >= kNeverUs && r.on_stuck_poll) r.on_stuck_poll(call.where_called());
        return call.done_query(cudaErrorNotReady);
    }
    run_until_done({target->last_op});
    return call.done_query(runtime().devices[target->device].sticky);
}

cudaError_t wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags, bool per_thread_default,
                       Site site) {
    ApiCall call("cudaStreamWaitEvent", site);
    call.arg_stream("stream", stream, per_thread_default).arg_event("event", event).arg("flags", flags);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    CUevent_st* waited = find_event(event);
    if (target == nullptr || waited == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if ((flags & ~static_cast<unsigned>(cudaEventWaitExternal)) != 0) return call.done(cudaErrorInvalidValue);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    OpRequest request;
    request.kind = mgpu::trace::OpKind::StreamWait;
    request.name = "cudaStreamWaitEvent";
    request.stream = target;
    request.device = target->device;
    // An event never recorded is complete: waiting for it adds no dependency.
    if (waited->recorded) request.extra_deps.push_back(waited->record_op);
    enqueue(std::move(request));
    return call.done(cudaSuccess);
}

template <class T, class Read>
cudaError_t stream_property(const char* name, cudaStream_t stream, T* out, bool per_thread_default, Site site,
                            Read read) {
    ApiCall call(name, site);
    call.arg_stream("hStream", stream, per_thread_default);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (out == nullptr) return call.done(cudaErrorInvalidValue);
    *out = read(*target);
    return call.done(cudaSuccess);
}

int device_of_stream(const CUstream_st& s) { return s.device; }
unsigned flags_of_stream(const CUstream_st& s) { return s.flags; }
int priority_of_stream(const CUstream_st& s) { return s.priority; }

}  // namespace

cudaError_t cudaStreamCreate(cudaStream_t* pStream, Site site) {
    ApiCall call("cudaStreamCreate", site);
    return create_stream(call, pStream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags, Site site) {
    ApiCall call("cudaStreamCreateWithFlags", site);
    call.arg("flags", flags);
    return create_stream(call, pStream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority, Site site) {
    ApiCall call("cudaStreamCreateWithPriority", site);
    call.arg("flags", flags).arg("priority", priority);
    return create_stream(call, pStream, flags, priority);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream, Site site) {
    ApiCall call("cudaStreamDestroy", site);
    call.arg_stream("stream", stream, false);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    Runtime& r = runtime();
    auto it = r.streams.find(stream);
    if (it == r.streams.end()) {
        const bool destroyed = std::any_of(r.destroyed_streams.begin(), r.destroyed_streams.end(),
                                           [&](const auto& gone) { return gone.get() == stream; });
        if (destroyed)
            call.crash("mgpu-sim: cudaStreamDestroy at " + where(site) +
                       " destroys a stream that was already destroyed. The CUDA runtime crashes on this, so the "
                       "simulator stops here as well.\n  Destroy each stream once, and set the handle to nullptr "
                       "afterwards if it may be destroyed again.\n");
        return call.done(cudaErrorInvalidResourceHandle);
    }
    if (cudaError_t status = context_status(it->second->device); status != cudaSuccess) return call.done(status);
    // Work already queued still runs: operations refer to each other, not to the stream.
    r.destroyed_streams.push_back(std::move(it->second));
    r.streams.erase(it);
    return call.done(cudaSuccess);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream, Site site) { return synchronize_stream(stream, false, site); }
cudaError_t mgpu_ptds_cudaStreamSynchronize(cudaStream_t stream, Site site) {
    return synchronize_stream(stream, true, site);
}
cudaError_t cudaStreamQuery(cudaStream_t stream, Site site) { return query_stream(stream, false, site); }
cudaError_t mgpu_ptds_cudaStreamQuery(cudaStream_t stream, Site site) { return query_stream(stream, true, site); }
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags, Site site) {
    return wait_event(stream, event, flags, false, site);
}
cudaError_t mgpu_ptds_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags, Site site) {
    return wait_event(stream, event, flags, true, site);
}
cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device, Site site) {
    return stream_property("cudaStreamGetDevice", hStream, device, false, site, device_of_stream);
}
cudaError_t mgpu_ptds_cudaStreamGetDevice(cudaStream_t hStream, int* device, Site site) {
    return stream_property("cudaStreamGetDevice", hStream, device, true, site, device_of_stream);
}
cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags, Site site) {
    return stream_property("cudaStreamGetFlags", hStream, flags, false, site, flags_of_stream);
}
cudaError_t mgpu_ptds_cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags, Site site) {
    return stream_property("cudaStreamGetFlags", hStream, flags, true, site, flags_of_stream);
}
cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority, Site site) {
    return stream_property("cudaStreamGetPriority", hStream, priority, false, site, priority_of_stream);
}
cudaError_t mgpu_ptds_cudaStreamGetPriority(cudaStream_t hStream, int* priority, Site site) {
    return stream_property("cudaStreamGetPriority", hStream, priority, true, site, priority_of_stream);
}
