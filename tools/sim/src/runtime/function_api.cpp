// What a program can ask about its kernels: cudaFuncGetAttributes and the occupancy calculator
// (function_attributes.h says how the answers are modelled).
#include <algorithm>

#include "api_call.h"
#include "cuda_runtime_api.h"
#include "function_attributes.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

// The kernel's attributes on the current device, with its cudaFuncSetAttribute settings.
cudaFuncAttributes attributes_of(const void* func, int device) {
    Runtime& r = runtime();
    const mgpu::sim::DeviceSpec& spec = r.machine.devices[device];
    auto raised = r.max_dynamic_shared.find(func);
    const int max_dynamic = raised != r.max_dynamic_shared.end()
                                ? raised->second
                                : static_cast<int>(spec.shared_mem_per_block);
    return model_function_attributes(spec, max_dynamic);
}

}  // namespace

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func, Site site) {
    ApiCall call("cudaFuncGetAttributes", site);
    call.arg("func", func);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (attr == nullptr) return call.done(cudaErrorInvalidValue);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    *attr = attributes_of(func, device);
    return call.done(cudaSuccess);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags,
                                                                   Site site) {
    ApiCall call("cudaOccupancyMaxActiveBlocksPerMultiprocessor", site);
    call.arg("func", func).arg("blockSize", blockSize).arg("dynamicSMemSize", static_cast<long long>(dynamicSMemSize));
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (numBlocks == nullptr || blockSize <= 0 ||
        (flags & ~static_cast<unsigned>(cudaOccupancyDisableCachingOverride)) != 0)
        return call.done(cudaErrorInvalidValue);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    const cudaFuncAttributes attributes = attributes_of(func, device);
    *numBlocks = resident_blocks_per_sm(runtime().machine.devices[device], attributes, blockSize, dynamicSMemSize);
    return call.done(cudaSuccess);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize, Site site) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                  cudaOccupancyDefault, site);
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* func, int numBlocks,
                                                      int blockSize, Site site) {
    ApiCall call("cudaOccupancyAvailableDynamicSMemPerBlock", site);
    call.arg("func", func).arg("numBlocks", numBlocks).arg("blockSize", blockSize);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (dynamicSmemSize == nullptr || numBlocks <= 0 || blockSize <= 0) return call.done(cudaErrorInvalidValue);
    if (func == nullptr) return call.done(cudaErrorInvalidDeviceFunction);
    const mgpu::sim::DeviceSpec& spec = runtime().machine.devices[device];
    const cudaFuncAttributes attributes = attributes_of(func, device);
    // The largest size, in whole allocation units, at which numBlocks blocks still fit.
    std::size_t low = 0, high = static_cast<std::size_t>(attributes.maxDynamicSharedSizeBytes);
    if (resident_blocks_per_sm(spec, attributes, blockSize, 0) < numBlocks) {
        *dynamicSmemSize = 0;
        return call.done(cudaSuccess);
    }
    while (low < high) {
        const std::size_t middle = (low + high + 1) / 2;
        if (resident_blocks_per_sm(spec, attributes, blockSize, middle) >= numBlocks)
            low = middle;
        else
            high = middle - 1;
    }
    *dynamicSmemSize = low;
    return call.done(cudaSuccess);
}
