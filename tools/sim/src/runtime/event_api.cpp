// Events: markers in a stream whose completion the host can wait for, query and time.
#include <algorithm>

#include "api_call.h"
#include "cuda_runtime_api.h"
#include "scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

constexpr unsigned kEventFlags = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;

cudaError_t create_event(ApiCall& call, cudaEvent_t* event, unsigned int flags) {
    Runtime& r = runtime();
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (event == nullptr || (flags & ~kEventFlags) != 0) return call.done(cudaErrorInvalidValue);
    // Interprocess events must be created without timing.
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)) return call.done(cudaErrorInvalidValue);
    auto created = std::make_unique<CUevent_st>();
    created->trace_id = r.next_handle_id++;
    created->device = device;
    created->flags = flags;
    created->created_at = call.site();
    CUevent_st* handle = created.get();
    r.events.emplace(handle, std::move(created));
    *event = handle;
    call.set_output("event#" + std::to_string(handle->trace_id));
    return call.done(cudaSuccess);
}

cudaError_t record_event(cudaEvent_t event, cudaStream_t stream, bool per_thread_default, Site site) {
    ApiCall call("cudaEventRecord", site);
    call.arg_event("event", event).arg_stream("stream", stream, per_thread_default);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUevent_st* marker = find_event(event);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    // An event records only into streams of the device it was created on.
    if (marker == nullptr || target == nullptr || marker->device != target->device)
        return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    OpRequest request;
    request.kind = mgpu::trace::OpKind::EventRecord;
    request.name = "cudaEventRecord";
    request.stream = target;
    request.device = target->device;
    const Enqueued op = enqueue(std::move(request));
    marker->record_op = op.id;
    marker->recorded = true;
    return call.done(cudaSuccess);
}

}  // namespace

cudaError_t cudaEventCreate(cudaEvent_t* event, Site site) {
    ApiCall call("cudaEventCreate", site);
    return create_event(call, event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags, Site site) {
    ApiCall call("cudaEventCreateWithFlags", site);
    call.arg("flags", flags);
    return create_event(call, event, flags);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream, Site site) {
    return record_event(event, stream, false, site);
}
cudaError_t mgpu_ptds_cudaEventRecord(cudaEvent_t event, cudaStream_t stream, Site site) {
    return record_event(event, stream, true, site);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event, Site site) {
    ApiCall call("cudaEventSynchronize", site, HostCost::Sync);
    call.arg_event("event", event);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUevent_st* marker = find_event(event);
    if (marker == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(marker->device); status != cudaSuccess) return call.done(status);
    if (!marker->recorded) return call.done(cudaSuccess);
    run_until_done({marker->record_op});
    call.wait_until(op_end_us(marker->record_op));
    return call.done(runtime().devices[marker->device].sticky);
}

cudaError_t cudaEventQuery(cudaEvent_t event, Site site) {
    ApiCall call("cudaEventQuery", site);
    call.arg_event("event", event);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUevent_st* marker = find_event(event);
    if (marker == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(marker->device); status != cudaSuccess) return call.done(status);
    if (!marker->recorded) return call.done(cudaSuccess);
    if (op_end_us(marker->record_op) > host_clock()) return call.done_query(cudaErrorNotReady);
    run_until_done({marker->record_op});
    return call.done(runtime().devices[marker->device].sticky);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end, Site site) {
    ApiCall call("cudaEventElapsedTime", site);
    call.arg_event("start", start).arg_event("end", end);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (ms == nullptr) return call.done(cudaErrorInvalidValue);
    CUevent_st* first = find_event(start);
    CUevent_st* last = find_event(end);
    if (first == nullptr || last == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if ((first->flags | last->flags) & cudaEventDisableTiming) return call.done(cudaErrorInvalidResourceHandle);
    if (!first->recorded || !last->recorded) return call.done(cudaErrorInvalidResourceHandle);
    // Two devices' clocks are not one timeline: NVIDIA documents that the call fails.
    if (first->device != last->device) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(last->device); status != cudaSuccess) return call.done(status);
    if (std::max(op_end_us(first->record_op), op_end_us(last->record_op)) > host_clock())
        return call.done_query(cudaErrorNotReady);
    run_until_done({first->record_op, last->record_op});
    *ms = static_cast<float>((op_end_us(last->record_op) - op_end_us(first->record_op)) / 1000.0);
    return call.done(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event, Site site) {
    ApiCall call("cudaEventDestroy", site);
    call.arg_event("event", event);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    Runtime& r = runtime();
    auto it = r.events.find(event);
    if (it == r.events.end()) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(it->second->device); status != cudaSuccess) return call.done(status);
    r.events.erase(it);
    return call.done(cudaSuccess);
}
