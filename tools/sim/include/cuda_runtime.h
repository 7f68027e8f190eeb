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

#if __has_include("mgpu/sim/device_language.h")
#include "mgpu/sim/device_language.h"
#endif
