// Per-device settings kernels are said to run under: cudaDeviceGetLimit/SetLimit and the cache
// configurations. Kernels here are host code, so the settings change nothing they do; the calls
// keep what was set (the device's cache preference too), answer with CUDA 13's defaults on an H200
// otherwise, and check their arguments
// as CUDA does. A cache preference is a hint the real runtime may ignore too.
#include "api_call.h"
#include "cuda_runtime_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// The value of a limit nobody has set, as CUDA 13.0 answered on an H200. The device runtime's sync
// depth answers cudaErrorUnsupportedLimit there (no relocatable device code in the program); a
// value that names no limit at all is cudaErrorInvalidValue.
enum class LimitAnswer { Known, Unsupported, NoSuchLimit };
LimitAnswer default_limit(cudaLimit limit, std::size_t& value) {
    switch (limit) {
    case cudaLimitStackSize: value = 1024; return LimitAnswer::Known;
    case cudaLimitPrintfFifoSize: value = 8650752; return LimitAnswer::Known;
    case cudaLimitMallocHeapSize: value = 8 << 20; return LimitAnswer::Known;
    case cudaLimitDevRuntimeSyncDepth: return LimitAnswer::Unsupported;
    case cudaLimitDevRuntimePendingLaunchCount: value = 2048; return LimitAnswer::Known;
    case cudaLimitMaxL2FetchGranularity: value = 64; return LimitAnswer::Known;
    case cudaLimitPersistingL2CacheSize: value = 11796480; return LimitAnswer::Known;
    default: return LimitAnswer::NoSuchLimit;
    }
}

cudaError_t limit_error(LimitAnswer answer) {
    return answer == LimitAnswer::Unsupported ? cudaErrorUnsupportedLimit : cudaErrorInvalidValue;
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
    if (const LimitAnswer answer = default_limit(limit, value); answer != LimitAnswer::Known)
        return call.done(limit_error(answer));
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
    if (const LimitAnswer answer = default_limit(limit, unused); answer != LimitAnswer::Known)
        return call.done(limit_error(answer));
    if (limit == cudaLimitMaxL2FetchGranularity && value > 128) return call.done(cudaErrorInvalidValue);
    runtime().devices[device].limits[limit] = value;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache cacheConfig, Site site) {
    ApiCall call("cudaDeviceSetCacheConfig", site);
    call.arg("cacheConfig", cacheConfig);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (!valid_cache_config(cacheConfig)) return call.done(cudaErrorInvalidValue);
    runtime().devices[device].cache_config = cacheConfig;   // kept and answered back, as on the H200
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* pCacheConfig, Site site) {
    ApiCall call("cudaDeviceGetCacheConfig", site);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (pCacheConfig == nullptr) return call.done(cudaErrorInvalidValue);
    *pCacheConfig = runtime().devices[device].cache_config;
    return call.done(cudaSuccess);
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache cacheConfig, Site site) {
    ApiCall call("cudaFuncSetCacheConfig", site);
    call.arg("func", func).arg("cacheConfig", cacheConfig);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    return call.done(valid_cache_config(cacheConfig) ? cudaSuccess : cudaErrorInvalidValue);
}
