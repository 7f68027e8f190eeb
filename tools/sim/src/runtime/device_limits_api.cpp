// Per-device settings kernels are said to run under: cudaDeviceGetLimit/SetLimit and the cache
// configurations. Kernels here are host code, so the settings change nothing they do; the calls
// keep what was set, answer with CUDA 13's defaults on an H200 otherwise, and check their arguments
// as CUDA does. A cache preference is a hint the real runtime may ignore too.
#include "api_call.h"
#include "cuda_runtime_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// The value of a limit nobody has set (CUDA 13 on an H200).
bool default_limit(cudaLimit limit, std::size_t& value) {
    switch (limit) {
    case cudaLimitStackSize: value = 1024; return true;
    case cudaLimitPrintfFifoSize: value = 1 << 20; return true;
    case cudaLimitMallocHeapSize: value = 8 << 20; return true;
    case cudaLimitDevRuntimeSyncDepth: value = 2; return true;
    case cudaLimitDevRuntimePendingLaunchCount: value = 2048; return true;
    case cudaLimitMaxL2FetchGranularity: value = 64; return true;
    case cudaLimitPersistingL2CacheSize: value = 0; return true;
    default: return false;
    }
}

bool valid_cache_config(cudaFuncCache config) {
    return config == cudaFuncCachePreferNone || config == cudaFuncCachePreferShared ||
           config == cudaFuncCachePreferL1 || config == cudaFuncCachePreferEqual;
}

}  // namespace

cudaError_t cudaDeviceGetLimit(size_t* pValue, cudaLimit limit, Site site) {
    ApiCall call("cudaDeviceGetLimit", site);
    call.arg("limit", limit);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (pValue == nullptr) return call.done(cudaErrorInvalidValue);
    std::size_t value = 0;
    if (!default_limit(limit, value)) return call.done(cudaErrorUnsupportedLimit);
    const auto& limits = runtime().devices[device].limits;
    auto set = limits.find(limit);
    *pValue = set != limits.end() ? set->second : value;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value, Site site) {
    ApiCall call("cudaDeviceSetLimit", site);
    call.arg("limit", limit).arg("value", static_cast<long long>(value));
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    std::size_t unused = 0;
    if (!default_limit(limit, unused)) return call.done(cudaErrorUnsupportedLimit);
    if (limit == cudaLimitMaxL2FetchGranularity && value > 128) return call.done(cudaErrorInvalidValue);
    runtime().devices[device].limits[limit] = value;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig, Site site) {
    ApiCall call("cudaDeviceSetCacheConfig", site);
    call.arg("cacheConfig", cacheConfig);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    return call.done(valid_cache_config(cacheConfig) ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* pCacheConfig, Site site) {
    ApiCall call("cudaDeviceGetCacheConfig", site);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (pCacheConfig == nullptr) return call.done(cudaErrorInvalidValue);
    *pCacheConfig = cudaFuncCachePreferNone;
    return call.done(cudaSuccess);
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig, Site site) {
    ApiCall call("cudaFuncSetCacheConfig", site);
    call.arg("func", func).arg("cacheConfig", cacheConfig);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    return call.done(valid_cache_config(cacheConfig) ? cudaSuccess : cudaErrorInvalidValue);
}
