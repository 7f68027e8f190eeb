// What CUDA code includes: the runtime API, its C++ conveniences (typed cudaMalloc and
// friends, as NVIDIA's cuda_runtime.h provides them) and, where the kernel support is built,
// the device language (__global__, threadIdx, the launch template).
#pragma once

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

#if __has_include("mgpu/sim/device_language.h")
#include "mgpu/sim/device_language.h"
#endif
