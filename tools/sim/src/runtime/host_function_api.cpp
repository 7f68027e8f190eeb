// Host work queued on a stream: cudaLaunchHostFunc and cudaStreamAddCallback. Each runs in stream
// order, after the work queued before it and before the work queued after it, and, as in CUDA, on
// a thread of the runtime's own rather than on the thread that queued it. The real driver has one
// such thread per context, so host functions of one device never overlap: here they share one
// "host-function" engine per device.
#include <thread>

#include "api_call.h"
#include "cuda_runtime_api.h"
#include "host_function.h"
#include "scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// What the driver takes to hand a host function to its thread and come back (modelled).
constexpr double kHostFunctionUs = 5.0;

cudaError_t queue_host_work(ApiCall& call, cudaStream_t stream, bool per_thread_default,
                            std::function<void(cudaError_t)> body) {
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    CUstream_st* target = resolve_stream(stream, per_thread_default);
    if (target == nullptr) return call.done(cudaErrorInvalidResourceHandle);
    if (cudaError_t status = context_status(target->device); status != cudaSuccess) return call.done(status);
    OpRequest request;
    request.kind = mgpu::trace::OpKind::HostFunction;
    request.name = call.where_called();
    request.stream = target;
    request.device = target->device;
    request.engine = "host-function";
    request.engine_device = target->device;
    request.duration_us = kHostFunctionUs;
    const int device = target->device;
    request.work = [device, body = std::move(body)] {
        const cudaError_t stream_status = runtime().devices[device].sticky;
        run_on_runtime_thread([&] { body(stream_status); });
    };
    enqueue(std::move(request));
    return call.done(cudaSuccess);
}

cudaError_t launch_host_function(cudaStream_t stream, cudaHostFn_t fn, void* userData, bool per_thread_default,
                                 Site site) {
    ApiCall call("cudaLaunchHostFunc", site, HostCost::Launch);
    call.arg_stream("stream", stream, per_thread_default)
        .arg("fn", reinterpret_cast<const void*>(fn))
        .arg("userData", userData);
    if (fn == nullptr) return call.done(cudaErrorInvalidValue);
    return queue_host_work(call, stream, per_thread_default, [fn, userData](cudaError_t) { fn(userData); });
}

cudaError_t add_callback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned int flags,
                         bool per_thread_default, Site site) {
    ApiCall call("cudaStreamAddCallback", site, HostCost::Launch);
    call.arg_stream("stream", stream, per_thread_default)
        .arg("callback", reinterpret_cast<const void*>(callback))
        .arg("userData", userData)
        .arg("flags", flags);
    if (callback == nullptr || flags != 0) return call.done(cudaErrorInvalidValue);
    // The callback is told the stream as the program named it and the error of the work before it.
    return queue_host_work(call, stream, per_thread_default, [stream, callback, userData](cudaError_t status) {
        callback(stream, status, userData);
    });
}

}  // namespace

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData, Site site) {
    return launch_host_function(stream, fn, userData, false, site);
}
cudaError_t mgpu_ptds_cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData, Site site) {
    return launch_host_function(stream, fn, userData, true, site);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned int flags,
                                  Site site) {
    return add_callback(stream, callback, userData, flags, false, site);
}
cudaError_t mgpu_ptds_cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                            unsigned int flags, Site site) {
    return add_callback(stream, callback, userData, flags, true, site);
}
