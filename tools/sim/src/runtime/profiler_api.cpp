// cudaProfilerStart and cudaProfilerStop. The simulator's trace always records everything, and
// with no profiler attached the real calls succeed and do nothing; so do these.
#include "api_call.h"
#include "cuda_profiler_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

cudaError_t cudaProfilerStart(Site site) {
    ApiCall call("cudaProfilerStart", site);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    return call.done(cudaSuccess);
}

cudaError_t cudaProfilerStop(Site site) {
    ApiCall call("cudaProfilerStop", site);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    return call.done(cudaSuccess);
}
