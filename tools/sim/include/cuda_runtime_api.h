// The CUDA runtime API of the simulated machine: real names, argument types and error codes.
// Every function takes a defaulted mgpu::sim::Site as its last parameter (MGPU_SITE) so the
// trace records the file and line of the call without any macro in the caller's code.
#pragma once
#define __CUDA_RUNTIME_API_H__

#include <cstddef>

#include "driver_functions.h"
#include "driver_types.h"
#include "mgpu/sim/site.h"
#include "mgpu/sim/unsupported_api.h"
#include "vector_types.h"

// CUDA_VERSION belongs to the driver API's cuda.h, which the simulator does not provide.
#define CUDART_VERSION 13000
#define __CUDART_API_VERSION CUDART_VERSION

// Devices and versions
cudaError_t cudaGetDeviceCount(int* count, MGPU_SITE);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device, MGPU_SITE);
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device, MGPU_SITE);
cudaError_t cudaSetDevice(int device, MGPU_SITE);
cudaError_t cudaGetDevice(int* device, MGPU_SITE);
cudaError_t cudaSetDeviceFlags(unsigned int flags, MGPU_SITE);
cudaError_t cudaGetDeviceFlags(unsigned int* flags, MGPU_SITE);
cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags, MGPU_SITE);
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop, MGPU_SITE);
cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device, MGPU_SITE);
cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId, MGPU_SITE);
cudaError_t cudaMemGetInfo(size_t* free, size_t* total, MGPU_SITE);
cudaError_t cudaDeviceSynchronize(MGPU_SITE);
cudaError_t cudaDeviceReset(MGPU_SITE);
cudaError_t cudaDriverGetVersion(int* driverVersion, MGPU_SITE);
cudaError_t cudaRuntimeGetVersion(int* runtimeVersion, MGPU_SITE);
cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority, MGPU_SITE);
cudaError_t cudaDeviceGetLimit(size_t* pValue, enum cudaLimit limit, MGPU_SITE);
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value, MGPU_SITE);
cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache* pCacheConfig, MGPU_SITE);
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig, MGPU_SITE);

// Errors
cudaError_t cudaGetLastError(MGPU_SITE);
cudaError_t cudaPeekAtLastError(MGPU_SITE);
const char* cudaGetErrorName(cudaError_t error, MGPU_SITE);
const char* cudaGetErrorString(cudaError_t error, MGPU_SITE);

// Memory
cudaError_t cudaMalloc(void** devPtr, size_t size, MGPU_SITE);
cudaError_t cudaFree(void* devPtr, MGPU_SITE);
cudaError_t cudaMallocHost(void** ptr, size_t size, MGPU_SITE);
cudaError_t cudaFreeHost(void* ptr, MGPU_SITE);
cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags, MGPU_SITE);
cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags, MGPU_SITE);
cudaError_t cudaHostUnregister(void* ptr, MGPU_SITE);
cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags, MGPU_SITE);
cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost, MGPU_SITE);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr, MGPU_SITE);
cudaError_t cudaMemset(void* devPtr, int value, size_t count, MGPU_SITE);
cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, MGPU_SITE);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal, MGPU_SITE);
cudaError_t cudaMemPrefetchAsync(const void* devPtr, size_t count, struct cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemAdvise(const void* devPtr, size_t count, enum cudaMemoryAdvise advice, struct cudaMemLocation location,
                          MGPU_SITE);
cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length = 0,
                                     unsigned int flags = cudaMemAttachSingle, MGPU_SITE);
cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height, MGPU_SITE);
cudaError_t cudaMalloc3D(struct cudaPitchedPtr* pitchedDevPtr, struct cudaExtent extent, MGPU_SITE);
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind, MGPU_SITE);
cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms* p, MGPU_SITE);
cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height, MGPU_SITE);
cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count, MGPU_SITE);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                                cudaStream_t stream = 0, MGPU_SITE);

// Peer access
cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice, MGPU_SITE);
cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags, MGPU_SITE);
cudaError_t cudaDeviceDisablePeerAccess(int peerDevice, MGPU_SITE);
cudaError_t cudaDeviceGetP2PAttribute(int* value, enum cudaDeviceP2PAttr attr, int srcDevice, int dstDevice,
                                      MGPU_SITE);

// Streams
cudaError_t cudaStreamCreate(cudaStream_t* pStream, MGPU_SITE);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags, MGPU_SITE);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority, MGPU_SITE);
cudaError_t cudaStreamDestroy(cudaStream_t stream, MGPU_SITE);
cudaError_t cudaStreamSynchronize(cudaStream_t stream, MGPU_SITE);
cudaError_t cudaStreamQuery(cudaStream_t stream, MGPU_SITE);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0, MGPU_SITE);
cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device, MGPU_SITE);
cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags, MGPU_SITE);
cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority, MGPU_SITE);
cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData, MGPU_SITE);
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData, unsigned int flags,
                                  MGPU_SITE);

// Events
cudaError_t cudaEventCreate(cudaEvent_t* event, MGPU_SITE);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags, MGPU_SITE);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaEventSynchronize(cudaEvent_t event, MGPU_SITE);
cudaError_t cudaEventQuery(cudaEvent_t event, MGPU_SITE);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end, MGPU_SITE);
cudaError_t cudaEventDestroy(cudaEvent_t event, MGPU_SITE);

// Kernels
cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value, MGPU_SITE);
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func, MGPU_SITE);
cudaError_t cudaFuncSetCacheConfig(const void* func, enum cudaFuncCache cacheConfig, MGPU_SITE);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize, MGPU_SITE);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags,
                                                                   MGPU_SITE);
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* func, int numBlocks,
                                                      int blockSize, MGPU_SITE);

// __device__ and __constant__ variables. `symbol` is the variable's address as host code sees it;
// the copies are those of the current device.
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset = 0,
                               enum cudaMemcpyKind kind = cudaMemcpyHostToDevice, MGPU_SITE);
cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset = 0,
                                 enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost, MGPU_SITE);
cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol, MGPU_SITE);
cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol, MGPU_SITE);

// The same calls when stream 0 means the calling thread's own default stream
// (nvcc --default-stream per-thread defines CUDA_API_PER_THREAD_DEFAULT_STREAM).
cudaError_t mgpu_ptds_cudaMemset(void* devPtr, int value, size_t count, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamSynchronize(cudaStream_t stream, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamQuery(cudaStream_t stream, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamGetDevice(cudaStream_t hStream, int* device, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamGetPriority(cudaStream_t hStream, int* priority, MGPU_SITE);
cudaError_t mgpu_ptds_cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset = 0,
                                         enum cudaMemcpyKind kind = cudaMemcpyHostToDevice, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                              enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset = 0,
                                           enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                                enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, enum cudaMemcpyKind kind, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                        size_t height, enum cudaMemcpyKind kind, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpy3D(const struct cudaMemcpy3DParms* p, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                                        cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                            unsigned int flags, MGPU_SITE);
cudaError_t mgpu_ptds_cudaMemPrefetchAsync(const void* devPtr, size_t count, struct cudaMemLocation location,
                                           unsigned int flags, cudaStream_t stream = 0, MGPU_SITE);
cudaError_t mgpu_ptds_cudaStreamAttachMemAsync(cudaStream_t stream, void* devPtr, size_t length = 0,
                                               unsigned int flags = cudaMemAttachSingle, MGPU_SITE);

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cudaMemset mgpu_ptds_cudaMemset
#define cudaMemsetAsync mgpu_ptds_cudaMemsetAsync
#define cudaMemcpy mgpu_ptds_cudaMemcpy
#define cudaMemcpyAsync mgpu_ptds_cudaMemcpyAsync
#define cudaStreamSynchronize mgpu_ptds_cudaStreamSynchronize
#define cudaStreamQuery mgpu_ptds_cudaStreamQuery
#define cudaStreamWaitEvent mgpu_ptds_cudaStreamWaitEvent
#define cudaStreamGetDevice mgpu_ptds_cudaStreamGetDevice
#define cudaStreamGetFlags mgpu_ptds_cudaStreamGetFlags
#define cudaStreamGetPriority mgpu_ptds_cudaStreamGetPriority
#define cudaEventRecord mgpu_ptds_cudaEventRecord
#define cudaMemcpyToSymbol mgpu_ptds_cudaMemcpyToSymbol
#define cudaMemcpyToSymbolAsync mgpu_ptds_cudaMemcpyToSymbolAsync
#define cudaMemcpyFromSymbol mgpu_ptds_cudaMemcpyFromSymbol
#define cudaMemcpyFromSymbolAsync mgpu_ptds_cudaMemcpyFromSymbolAsync
#define cudaMemcpy2D mgpu_ptds_cudaMemcpy2D
#define cudaMemcpy2DAsync mgpu_ptds_cudaMemcpy2DAsync
#define cudaMemcpy3D mgpu_ptds_cudaMemcpy3D
#define cudaMemcpy3DAsync mgpu_ptds_cudaMemcpy3DAsync
#define cudaMemset2D mgpu_ptds_cudaMemset2D
#define cudaMemset2DAsync mgpu_ptds_cudaMemset2DAsync
#define cudaLaunchHostFunc mgpu_ptds_cudaLaunchHostFunc
#define cudaStreamAddCallback mgpu_ptds_cudaStreamAddCallback
#define cudaMemPrefetchAsync mgpu_ptds_cudaMemPrefetchAsync
#define cudaStreamAttachMemAsync mgpu_ptds_cudaStreamAttachMemAsync
#endif
