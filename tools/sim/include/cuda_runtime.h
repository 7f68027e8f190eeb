// What CUDA code includes: the runtime API, its C++ conveniences (typed cudaMalloc and
// friends, as NVIDIA's cuda_runtime.h provides them) and, where the kernel support is built,
// the device language (__global__, threadIdx, the launch template). The include guards of the
// real headers are defined too (__CUDA_RUNTIME_H__, __DRIVER_TYPES_H__, ...): cuda-samples'
// helper_cuda.h defines checkCudaErrors and findCudaDevice only when it sees them.
#pragma once
#define __CUDA_RUNTIME_H__

#include "cuda_runtime_api.h"
#include "vector_functions.h"

template <class T>
inline cudaError_t cudaMalloc(T** devPtr, size_t size, MGPU_SITE) {
    return ::cudaMalloc(reinterpret_cast<void**>(devPtr), size, site);
}

inline cudaError_t cudaMallocHost(void** ptr, size_t size, unsigned int flags, MGPU_SITE) {
    return ::cudaHostAlloc(ptr, size, flags, site);
}

template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size, unsigned int flags = 0, MGPU_SITE) {
    return ::cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags, site);
}

template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned int flags, MGPU_SITE) {
    return ::cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags, site);
}

inline cudaError_t cudaEventCreate(cudaEvent_t* event, unsigned int flags, MGPU_SITE) {
    return ::cudaEventCreateWithFlags(event, flags, site);
}

template <class T>
inline cudaError_t cudaFuncSetAttribute(T* entry, enum cudaFuncAttribute attr, int value, MGPU_SITE) {
    return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value, site);
}

// Device variables named as CUDA C++ names them: by the variable itself.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice, MGPU_SITE) {
    return ::cudaMemcpyToSymbol(static_cast<const void*>(&symbol), src, count, offset, kind, site);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                           enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t stream = 0, MGPU_SITE) {
    return ::cudaMemcpyToSymbolAsync(static_cast<const void*>(&symbol), src, count, offset, kind, stream, site);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost, MGPU_SITE) {
    return ::cudaMemcpyFromSymbol(dst, static_cast<const void*>(&symbol), count, offset, kind, site);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t stream = 0, MGPU_SITE) {
    return ::cudaMemcpyFromSymbolAsync(dst, static_cast<const void*>(&symbol), count, offset, kind, stream, site);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** devPtr, const T& symbol, MGPU_SITE) {
    return ::cudaGetSymbolAddress(devPtr, static_cast<const void*>(&symbol), site);
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T& symbol, MGPU_SITE) {
    return ::cudaGetSymbolSize(size, static_cast<const void*>(&symbol), site);
}

template <class T>
inline cudaError_t cudaMallocManaged(T** devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal, MGPU_SITE) {
    return ::cudaMallocManaged(reinterpret_cast<void**>(devPtr), size, flags, site);
}

template <class T>
inline cudaError_t cudaMallocPitch(T** devPtr, size_t* pitch, size_t width, size_t height, MGPU_SITE) {
    return ::cudaMallocPitch(reinterpret_cast<void**>(devPtr), pitch, width, height, site);
}

template <class T>
inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, T* entry, MGPU_SITE) {
    return ::cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(entry), site);
}

template <class T>
inline cudaError_t cudaFuncSetCacheConfig(T* func, enum cudaFuncCache cacheConfig, MGPU_SITE) {
    return ::cudaFuncSetCacheConfig(reinterpret_cast<const void*>(func), cacheConfig, site);
}

template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** pDevice, void* pHost, unsigned int flags, MGPU_SITE) {
    return ::cudaHostGetDevicePointer(reinterpret_cast<void**>(pDevice), pHost, flags, site);
}

template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, T func, int blockSize,
                                                                 size_t dynamicSMemSize, MGPU_SITE) {
    return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, reinterpret_cast<const void*>(func), blockSize, dynamicSMemSize, cudaOccupancyDefault, site);
}

template <class T>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, T func, int blockSize,
                                                                          size_t dynamicSMemSize, unsigned int flags,
                                                                          MGPU_SITE) {
    return ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, reinterpret_cast<const void*>(func), blockSize, dynamicSMemSize, flags, site);
}

template <class T>
inline cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, T func, int numBlocks,
                                                             int blockSize, MGPU_SITE) {
    return ::cudaOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, reinterpret_cast<const void*>(func), numBlocks,
                                                       blockSize, site);
}

// The block size that keeps the most threads resident per multiprocessor, and the smallest grid
// that fills the device at that size. Like CUDA's own template it tries every multiple of the warp
// size from the largest block the kernel and the device allow down to one warp, asking
// cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags for each (so a trace shows those calls),
// keeps the first size with the most resident threads and stops early once the multiprocessor is full.
template <class UnaryFunction, class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int* minGridSize, int* blockSize, T func,
                                                                           UnaryFunction blockSizeToDynamicSMemSize,
                                                                           int blockSizeLimit = 0,
                                                                           unsigned int flags = 0, MGPU_SITE) {
    if (minGridSize == nullptr || blockSize == nullptr || func == nullptr) return cudaErrorInvalidValue;
    int device = 0;
    cudaError_t status = ::cudaGetDevice(&device, site);
    int sm_count = 0, threads_per_sm = 0, device_block_limit = 0, granularity = 0;
    if (status == cudaSuccess) status = ::cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device, site);
    if (status == cudaSuccess)
        status = ::cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device, site);
    if (status == cudaSuccess)
        status = ::cudaDeviceGetAttribute(&device_block_limit, cudaDevAttrMaxThreadsPerBlock, device, site);
    if (status == cudaSuccess) status = ::cudaDeviceGetAttribute(&granularity, cudaDevAttrWarpSize, device, site);
    cudaFuncAttributes attributes{};
    if (status == cudaSuccess) status = ::cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(func), site);
    if (status != cudaSuccess) return status;

    int largest = device_block_limit < attributes.maxThreadsPerBlock ? device_block_limit : attributes.maxThreadsPerBlock;
    if (blockSizeLimit > 0 && blockSizeLimit < largest) largest = blockSizeLimit;
    int best_size = 0, best_blocks = 0, best_threads = 0;
    for (int aligned = (largest + granularity - 1) / granularity * granularity; aligned > 0; aligned -= granularity) {
        const int size = aligned < largest ? aligned : largest;
        int blocks = 0;
        status = ::cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &blocks, reinterpret_cast<const void*>(func), size,
            static_cast<size_t>(blockSizeToDynamicSMemSize(size)), flags, site);
        if (status != cudaSuccess) return status;
        if (blocks * size > best_threads) {
            best_size = size;
            best_blocks = blocks;
            best_threads = blocks * size;
        }
        if (best_threads == threads_per_sm) break;
    }
    *minGridSize = best_blocks * sm_count;
    *blockSize = best_size;
    return cudaSuccess;
}

template <class UnaryFunction, class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* minGridSize, int* blockSize, T func,
                                                                  UnaryFunction blockSizeToDynamicSMemSize,
                                                                  int blockSizeLimit = 0, MGPU_SITE) {
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(minGridSize, blockSize, func,
                                                                   blockSizeToDynamicSMemSize, blockSizeLimit,
                                                                   cudaOccupancyDefault, site);
}

template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, T func,
                                                               size_t dynamicSMemSize = 0, int blockSizeLimit = 0,
                                                               unsigned int flags = 0, MGPU_SITE) {
    return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(
        minGridSize, blockSize, func, [dynamicSMemSize](int) { return dynamicSMemSize; }, blockSizeLimit, flags, site);
}

template <class T>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, T func,
                                                      size_t dynamicSMemSize = 0, int blockSizeLimit = 0, MGPU_SITE) {
    return cudaOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, dynamicSMemSize, blockSizeLimit,
                                                       cudaOccupancyDefault, site);
}

#if __has_include("mgpu/sim/device_language.h")
#include "mgpu/sim/device_language.h"
#endif
