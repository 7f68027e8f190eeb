// cudaMemcpy*, cudaMemset* and cudaMemcpyPeer*: validation, ordering and when the host waits
// (the "Streams and synchronisation" rows of cuda-facts.md and CUDA's API sync behaviour).
#include "api_call.h"
#include "copy_plan.h"
#include "cuda_runtime_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// Pageable host-to-device copies up to this size are staged and the call returns (measured
// for 4 KB to 1 MiB); larger ones wait for the stream (measured at 64 MB). cudaMemcpy of the
// same sizes stages them too, then waits for the copy.
constexpr std::size_t kStagedPageableLimit = 1u << 20;

// The ends of a copy as its kind declares them, checked against where the pointers really are.
cudaError_t copy_ends(void* dst, const void* src, std::size_t count, const Rows& shape, int kind, CopyEnd& from,
                      CopyEnd& to) {
    const std::size_t src_span = shape.rows > 1 ? Rows::span(count, shape.rows, shape.src_pitch) : count;
    const std::size_t dst_span = shape.rows > 1 ? Rows::span(count, shape.rows, shape.dst_pitch) : count;
    if (!locate(src, src_span, from) || !locate(dst, dst_span, to)) return cudaErrorInvalidValue;
    const bool src_device = from.device >= 0, dst_device = to.device >= 0;
    switch (kind) {
    case cudaMemcpyHostToHost: return !src_device && !dst_device ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyHostToDevice: return dst_device ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToHost: return src_device ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDeviceToDevice: return src_device && dst_device ? cudaSuccess : cudaErrorInvalidValue;
    case cudaMemcpyDefault: return cudaSuccess;
    default: return cudaErrorInvalidMemcpyDirection;
    }
}

// The host returns a little after the copy ends: the driver learns of the end and wakes the thread.
void wait_for(ApiCall& call, const Enqueued& op) {
    run_until_done({op.id});
    call.wait_until(op.end_us + runtime().machine.cost.copy_return_us);
}

}  // namespace

namespace mgpu::sim::rt {

const char* memcpy_kind_name(int kind) {
    switch (kind) {
    case cudaMemcpyHostToHost: return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice: return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost: return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault: return "cudaMemcpyDefault";
    default: return "invalid";
    }
}

cudaError_t finish_memcpy(ApiCall& call, const MemcpyRequest& request) {
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (request.kind < cudaMemcpyHostToHost || request.kind > cudaMemcpyDefault)
        return call.done(cudaErrorInvalidMemcpyDirection);
    CUstream_st* target = resolve_stream(request.async ? request.stream : nullptr, request.per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (request.count == 0 || request.shape.rows == 0) return call.done(cudaSuccess);
    if (request.dst == nullptr || request.src == nullptr) return call.done(cudaErrorInvalidValue);
    CopySpec spec;
    if (cudaError_t status =
            copy_ends(request.dst, request.src, request.count, request.shape, request.kind, spec.from, spec.to);
        status != cudaSuccess)
        return call.done(status);
    for (int end : {spec.from.device, spec.to.device})
        if (end >= 0 && end != device)
            if (cudaError_t status = context_status(end); status != cudaSuccess) return call.done(status);

    const std::size_t bytes = request.count * request.shape.rows;
    spec.api_name = request.name;
    spec.dst = request.dst;
    spec.src = request.src;
    spec.count = request.count;
    spec.shape = request.shape;
    spec.stream = target;
    const bool host_src = spec.from.device < 0, host_dst = spec.to.device < 0;
    const bool cross_device = !host_src && !host_dst && spec.from.device != spec.to.device;
    spec.staged_in_pinned_buffer = host_src && !host_dst && !spec.from.pinned && bytes <= kStagedPageableLimit;
    bool host_waits = false;
    if (!request.async) {
        // Device-to-device copies return at once; anything touching host memory completes first.
        spec.serialise_devices = cross_device;
        host_waits = host_src || host_dst;
    } else if (host_src && host_dst) {
        host_waits = !(spec.from.pinned && spec.to.pinned);
    } else if (host_dst) {
        host_waits = !spec.to.pinned;
    } else if (host_src && !spec.from.pinned) {
        spec.snapshot_source = bytes <= kStagedPageableLimit;
        host_waits = !spec.snapshot_source;
    }
    const Enqueued op = enqueue_copy(spec);
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    if (host_waits) {
        wait_for(call, op);
    } else if (spec.snapshot_source) {
        // The host copies the bytes into the driver's staging buffer before the call returns.
        call.wait_until(call.begin_us() + cost.staging_us + static_cast<double>(bytes) / (cost.staging_gbps * 1e3));
    } else if (!host_src && !host_dst && (!request.async || !cross_device)) {
        call.wait_until(call.begin_us() + cost.d2d_memcpy_call_us);
    }
    return call.done(cudaSuccess);
}

cudaError_t queue_memcpy(ApiCall& call, const MemcpyRequest& request) {
    call.arg_named("kind", request.kind, memcpy_kind_name(request.kind));
    if (request.async) call.arg_stream("stream", request.stream, request.per_thread_default);
    else call.on_stream(nullptr, request.per_thread_default);
    return finish_memcpy(call, request);
}

cudaError_t queue_memset(ApiCall& call, const MemsetRequest& request) {
    if (request.async) call.arg_stream("stream", request.stream, request.per_thread_default);
    else call.on_stream(nullptr, request.per_thread_default);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(request.async ? request.stream : nullptr, request.per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (request.count == 0 || request.shape.rows == 0) return call.done(cudaSuccess);
    const std::size_t span =
        request.shape.rows > 1 ? Rows::span(request.count, request.shape.rows, request.shape.dst_pitch) : request.count;
    CopyEnd end;
    if (request.p == nullptr || !locate(request.p, span, end) || (end.device < 0 && !end.pinned))
        return call.done(cudaErrorInvalidValue);
    const Enqueued op =
        enqueue_memset(request.name, request.p, request.value, request.count, end.device, target, request.shape);
    // cudaMemset is asynchronous to the host except on page-locked host memory.
    if (!request.async && end.device < 0) wait_for(call, op);
    return call.done(cudaSuccess);
}

}  // namespace mgpu::sim::rt

namespace {


cudaError_t memcpy_call(const char* name, void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                        cudaStream_t stream, bool async, bool per_thread_default, Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("dst", dst).arg("src", src).arg("count", static_cast<long long>(count));
    return queue_memcpy(call, {name, dst, src, count, {}, kind, stream, async, per_thread_default});
}

cudaError_t memset_call(const char* name, void* devPtr, int value, size_t count, cudaStream_t stream, bool async,
                        bool per_thread_default, Site site) {
    ApiCall call(name, site, count <= kPageMemsetLimit ? HostCost::MemsetPage : HostCost::MemsetKernel);
    call.arg("devPtr", devPtr).arg("value", value).arg("count", static_cast<long long>(count));
    return queue_memset(call, {name, devPtr, value, count, {}, stream, async, per_thread_default});
}

cudaError_t peer_call(const char* name, void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                      cudaStream_t stream, bool async, Site site) {
    ApiCall call(name, site, HostCost::Copy);
    call.arg("dst", dst).arg("dstDevice", dstDevice).arg("src", src).arg("srcDevice", srcDevice);
    call.arg("count", static_cast<long long>(count));
    if (async) call.arg_stream("stream", stream, false);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (!valid_device(dstDevice) || !valid_device(srcDevice)) return call.done(cudaErrorInvalidDevice);
    for (int end : {srcDevice, dstDevice})
        if (cudaError_t status = context_status(end); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(async ? stream : nullptr, false);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (count == 0) return call.done(cudaSuccess);
    CopySpec spec;
    if (!locate(src, count, spec.from) || !locate(dst, count, spec.to) || spec.from.device != srcDevice ||
        spec.to.device != dstDevice)
        return call.done(cudaErrorInvalidValue);
    spec.api_name = name;
    spec.dst = dst;
    spec.src = src;
    spec.count = count;
    spec.stream = target;
    spec.serialise_devices = !async;   // cudaMemcpyPeerAsync is ordered only by its stream
    enqueue_copy(spec);
    if (srcDevice == dstDevice) call.wait_until(call.begin_us() + runtime().machine.cost.d2d_memcpy_call_us);
    return call.done(cudaSuccess);
}

}  // namespace

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, Site site) {
    return memcpy_call("cudaMemcpy", dst, src, count, kind, nullptr, false, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind, Site site) {
    return memcpy_call("cudaMemcpy", dst, src, count, kind, nullptr, false, true, site);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream,
                            Site site) {
    return memcpy_call("cudaMemcpyAsync", dst, src, count, kind, stream, true, false, site);
}
cudaError_t mgpu_ptds_cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                      cudaStream_t stream, Site site) {
    return memcpy_call("cudaMemcpyAsync", dst, src, count, kind, stream, true, true, site);
}
cudaError_t cudaMemset(void* devPtr, int value, size_t count, Site site) {
    return memset_call("cudaMemset", devPtr, value, count, nullptr, false, false, site);
}
cudaError_t mgpu_ptds_cudaMemset(void* devPtr, int value, size_t count, Site site) {
    return memset_call("cudaMemset", devPtr, value, count, nullptr, false, true, site);
}
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream, Site site) {
    return memset_call("cudaMemsetAsync", devPtr, value, count, stream, true, false, site);
}
cudaError_t mgpu_ptds_cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream, Site site) {
    return memset_call("cudaMemsetAsync", devPtr, value, count, stream, true, true, site);
}
cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count, Site site) {
    return peer_call("cudaMemcpyPeer", dst, dstDevice, src, srcDevice, count, nullptr, false, site);
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                cudaStream_t stream, Site site) {
    return peer_call("cudaMemcpyPeerAsync", dst, dstDevice, src, srcDevice, count, stream, true, site);
}
