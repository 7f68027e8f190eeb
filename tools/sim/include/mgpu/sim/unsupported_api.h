// CUDA 13 runtime calls the simulated machine does not provide, declared with their real
// signatures so that a program using one fails to COMPILE, with a message naming the call and the
// feature, instead of failing to link or misbehaving at run time. GCC reports a call to a function
// marked `error` wherever the call survives into the generated code, which at -O0 is every call.
#pragma once

#include <cstddef>

#include "mgpu/sim/api_types.h"

#define MGPU_SIM_UNSUPPORTED(name, feature)                                                                        \
    [[gnu::error(#name " is not supported by the simulated machine (" feature                                     \
                       "): run this program on a real GPU with the cuda backend (--backend cuda)")]]

// Structures that only these calls take; declared so that the declarations below are valid.
struct cudaKernelNodeParams;
struct cudaMemsetParams;
struct cudaHostNodeParams;
struct cudaGraphEdgeData_st;
typedef struct cudaGraphEdgeData_st cudaGraphEdgeData;
struct cudaGraphExecUpdateResultInfo_st;
typedef struct cudaGraphExecUpdateResultInfo_st cudaGraphExecUpdateResultInfo;
struct cudaLaunchConfig_st;
typedef struct cudaLaunchConfig_st cudaLaunchConfig_t;
struct cudaResourceDesc;
struct cudaTextureDesc;
struct cudaResourceViewDesc;
struct cudaMemPoolProps;
struct cudaMemAccessDesc;
struct cudaExternalMemoryHandleDesc;
struct cudaExternalSemaphoreHandleDesc;

struct cudaChannelFormatDesc {
    int x;
    int y;
    int z;
    int w;
    enum cudaChannelFormatKind f;
};

typedef struct cudaIpcEventHandle_st {
    char reserved[64];
} cudaIpcEventHandle_t;

typedef struct cudaIpcMemHandle_st {
    char reserved[64];
} cudaIpcMemHandle_t;

#define cudaIpcMemLazyEnablePeerAccess 0x01

// CUDA graphs and stream capture.
MGPU_SIM_UNSUPPORTED(cudaStreamBeginCapture, "CUDA graphs and stream capture")
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
MGPU_SIM_UNSUPPORTED(cudaStreamBeginCaptureToGraph, "CUDA graphs and stream capture")
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* dependencies, const cudaGraphEdgeData* dependencyData, size_t numDependencies, enum cudaStreamCaptureMode mode);
MGPU_SIM_UNSUPPORTED(cudaStreamEndCapture, "CUDA graphs and stream capture")
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph);
MGPU_SIM_UNSUPPORTED(cudaStreamIsCapturing, "CUDA graphs and stream capture")
cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus* pCaptureStatus);
MGPU_SIM_UNSUPPORTED(cudaStreamGetCaptureInfo, "CUDA graphs and stream capture")
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus* captureStatus_out, unsigned long long* id_out = 0, cudaGraph_t* graph_out = 0, const cudaGraphNode_t** dependencies_out = 0, const cudaGraphEdgeData** edgeData_out = 0, size_t* numDependencies_out = 0);
MGPU_SIM_UNSUPPORTED(cudaThreadExchangeStreamCaptureMode, "CUDA graphs and stream capture")
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode);
MGPU_SIM_UNSUPPORTED(cudaGraphCreate, "CUDA graphs and stream capture")
cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags);
MGPU_SIM_UNSUPPORTED(cudaGraphInstantiate, "CUDA graphs and stream capture")
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags = 0);
MGPU_SIM_UNSUPPORTED(cudaGraphInstantiateWithFlags, "CUDA graphs and stream capture")
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags = 0);
MGPU_SIM_UNSUPPORTED(cudaGraphLaunch, "CUDA graphs and stream capture")
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream);
MGPU_SIM_UNSUPPORTED(cudaGraphUpload, "CUDA graphs and stream capture")
cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream);
MGPU_SIM_UNSUPPORTED(cudaGraphExecDestroy, "CUDA graphs and stream capture")
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec);
MGPU_SIM_UNSUPPORTED(cudaGraphDestroy, "CUDA graphs and stream capture")
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
MGPU_SIM_UNSUPPORTED(cudaGraphAddKernelNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, const struct cudaKernelNodeParams* pNodeParams);
MGPU_SIM_UNSUPPORTED(cudaGraphAddMemcpyNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, const struct cudaMemcpy3DParms* pCopyParams);
MGPU_SIM_UNSUPPORTED(cudaGraphAddMemsetNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, const struct cudaMemsetParams* pMemsetParams);
MGPU_SIM_UNSUPPORTED(cudaGraphAddHostNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, const struct cudaHostNodeParams* pNodeParams);
MGPU_SIM_UNSUPPORTED(cudaGraphAddEmptyNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies);
MGPU_SIM_UNSUPPORTED(cudaGraphAddChildGraphNode, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies, size_t numDependencies, cudaGraph_t childGraph);
MGPU_SIM_UNSUPPORTED(cudaGraphAddDependencies, "CUDA graphs and stream capture")
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to, const cudaGraphEdgeData* edgeData, size_t numDependencies);
MGPU_SIM_UNSUPPORTED(cudaGraphGetNodes, "CUDA graphs and stream capture")
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes);
MGPU_SIM_UNSUPPORTED(cudaGraphClone, "CUDA graphs and stream capture")
cudaError_t cudaGraphClone(cudaGraph_t* pGraphClone, cudaGraph_t originalGraph);
MGPU_SIM_UNSUPPORTED(cudaGraphExecUpdate, "CUDA graphs and stream capture")
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphExecUpdateResultInfo* resultInfo);
MGPU_SIM_UNSUPPORTED(cudaGraphExecKernelNodeSetParams, "CUDA graphs and stream capture")
cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const struct cudaKernelNodeParams* pNodeParams);
MGPU_SIM_UNSUPPORTED(cudaUserObjectCreate, "CUDA graphs and stream capture")
cudaError_t cudaUserObjectCreate(cudaUserObject_t* object_out, void* ptr, cudaHostFn_t destroy, unsigned int initialRefcount, unsigned int flags);

// Launches without <<<...>>> (the simulator needs the kernel's parameter types, which void** arguments hide).
MGPU_SIM_UNSUPPORTED(cudaLaunchKernel, "launches without <<<...>>> (the simulator needs the kernel's parameter types, which void** arguments hide)")
cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void* *args, size_t sharedMem, cudaStream_t stream);
MGPU_SIM_UNSUPPORTED(cudaLaunchCooperativeKernel, "launches without <<<...>>> (the simulator needs the kernel's parameter types, which void** arguments hide)")
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void* *args, size_t sharedMem, cudaStream_t stream);
MGPU_SIM_UNSUPPORTED(cudaLaunchKernelExC, "launches without <<<...>>> (the simulator needs the kernel's parameter types, which void** arguments hide)")
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void* *args);

// CUDA arrays, textures and surfaces.
MGPU_SIM_UNSUPPORTED(cudaMallocArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, size_t width, size_t height = 0, unsigned int flags = 0);
MGPU_SIM_UNSUPPORTED(cudaMalloc3DArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc*desc, struct cudaExtent extent, unsigned int flags = 0);
MGPU_SIM_UNSUPPORTED(cudaMallocMipmappedArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* mipmappedArray, const struct cudaChannelFormatDesc*desc, struct cudaExtent extent, unsigned int numLevels, unsigned int flags = 0);
MGPU_SIM_UNSUPPORTED(cudaFreeArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaFreeArray(cudaArray_t array);
MGPU_SIM_UNSUPPORTED(cudaFreeMipmappedArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray);
MGPU_SIM_UNSUPPORTED(cudaArrayGetInfo, "CUDA arrays, textures and surfaces")
cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc* desc, struct cudaExtent* extent, unsigned int* flags, cudaArray_t array);
MGPU_SIM_UNSUPPORTED(cudaMemcpy2DToArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind);
MGPU_SIM_UNSUPPORTED(cudaMemcpy2DFromArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind);
MGPU_SIM_UNSUPPORTED(cudaMemcpy2DArrayToArray, "CUDA arrays, textures and surfaces")
cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height, enum cudaMemcpyKind kind = cudaMemcpyDeviceToDevice);
MGPU_SIM_UNSUPPORTED(cudaMemcpy2DToArrayAsync, "CUDA arrays, textures and surfaces")
cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream = 0);
MGPU_SIM_UNSUPPORTED(cudaMemcpy2DFromArrayAsync, "CUDA arrays, textures and surfaces")
cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream = 0);
MGPU_SIM_UNSUPPORTED(cudaCreateTextureObject, "CUDA arrays, textures and surfaces")
cudaError_t cudaCreateTextureObject(cudaTextureObject_t* pTexObject, const struct cudaResourceDesc* pResDesc, const struct cudaTextureDesc* pTexDesc, const struct cudaResourceViewDesc* pResViewDesc);
MGPU_SIM_UNSUPPORTED(cudaDestroyTextureObject, "CUDA arrays, textures and surfaces")
cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject);
MGPU_SIM_UNSUPPORTED(cudaGetTextureObjectResourceDesc, "CUDA arrays, textures and surfaces")
cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc* pResDesc, cudaTextureObject_t texObject);
MGPU_SIM_UNSUPPORTED(cudaCreateSurfaceObject, "CUDA arrays, textures and surfaces")
cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* pSurfObject, const struct cudaResourceDesc* pResDesc);
MGPU_SIM_UNSUPPORTED(cudaDestroySurfaceObject, "CUDA arrays, textures and surfaces")
cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject);

// The stream-ordered allocator and memory pools.
MGPU_SIM_UNSUPPORTED(cudaMallocAsync, "the stream-ordered allocator and memory pools")
cudaError_t cudaMallocAsync(void* *devPtr, size_t size, cudaStream_t hStream);
MGPU_SIM_UNSUPPORTED(cudaFreeAsync, "the stream-ordered allocator and memory pools")
cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream);
MGPU_SIM_UNSUPPORTED(cudaMallocFromPoolAsync, "the stream-ordered allocator and memory pools")
cudaError_t cudaMallocFromPoolAsync(void* *ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream);
MGPU_SIM_UNSUPPORTED(cudaMemPoolCreate, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* poolProps);
MGPU_SIM_UNSUPPORTED(cudaMemPoolDestroy, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool);
MGPU_SIM_UNSUPPORTED(cudaMemPoolSetAttribute, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value);
MGPU_SIM_UNSUPPORTED(cudaMemPoolGetAttribute, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value);
MGPU_SIM_UNSUPPORTED(cudaMemPoolTrimTo, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep);
MGPU_SIM_UNSUPPORTED(cudaMemPoolSetAccess, "the stream-ordered allocator and memory pools")
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t memPool, const struct cudaMemAccessDesc* descList, size_t count);
MGPU_SIM_UNSUPPORTED(cudaDeviceGetDefaultMemPool, "the stream-ordered allocator and memory pools")
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device);
MGPU_SIM_UNSUPPORTED(cudaDeviceSetMemPool, "the stream-ordered allocator and memory pools")
cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool);
MGPU_SIM_UNSUPPORTED(cudaDeviceGetMemPool, "the stream-ordered allocator and memory pools")
cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device);

// Interprocess communication (the simulated machine lives inside one process).
MGPU_SIM_UNSUPPORTED(cudaIpcGetMemHandle, "interprocess communication (the simulated machine lives inside one process)")
cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr);
MGPU_SIM_UNSUPPORTED(cudaIpcOpenMemHandle, "interprocess communication (the simulated machine lives inside one process)")
cudaError_t cudaIpcOpenMemHandle(void* *devPtr, cudaIpcMemHandle_t handle, unsigned int flags);
MGPU_SIM_UNSUPPORTED(cudaIpcCloseMemHandle, "interprocess communication (the simulated machine lives inside one process)")
cudaError_t cudaIpcCloseMemHandle(void* devPtr);
MGPU_SIM_UNSUPPORTED(cudaIpcGetEventHandle, "interprocess communication (the simulated machine lives inside one process)")
cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t* handle, cudaEvent_t event);
MGPU_SIM_UNSUPPORTED(cudaIpcOpenEventHandle, "interprocess communication (the simulated machine lives inside one process)")
cudaError_t cudaIpcOpenEventHandle(cudaEvent_t* event, cudaIpcEventHandle_t handle);

// Graphics and external resource interoperability.
MGPU_SIM_UNSUPPORTED(cudaGraphicsMapResources, "graphics and external resource interoperability")
cudaError_t cudaGraphicsMapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t stream = 0);
MGPU_SIM_UNSUPPORTED(cudaGraphicsUnmapResources, "graphics and external resource interoperability")
cudaError_t cudaGraphicsUnmapResources(int count, cudaGraphicsResource_t* resources, cudaStream_t stream = 0);
MGPU_SIM_UNSUPPORTED(cudaGraphicsResourceGetMappedPointer, "graphics and external resource interoperability")
cudaError_t cudaGraphicsResourceGetMappedPointer(void* *devPtr, size_t* size, cudaGraphicsResource_t resource);
MGPU_SIM_UNSUPPORTED(cudaGraphicsUnregisterResource, "graphics and external resource interoperability")
cudaError_t cudaGraphicsUnregisterResource(cudaGraphicsResource_t resource);
MGPU_SIM_UNSUPPORTED(cudaImportExternalMemory, "graphics and external resource interoperability")
cudaError_t cudaImportExternalMemory(cudaExternalMemory_t* extMem_out, const struct cudaExternalMemoryHandleDesc* memHandleDesc);
MGPU_SIM_UNSUPPORTED(cudaDestroyExternalMemory, "graphics and external resource interoperability")
cudaError_t cudaDestroyExternalMemory(cudaExternalMemory_t extMem);
MGPU_SIM_UNSUPPORTED(cudaImportExternalSemaphore, "graphics and external resource interoperability")
cudaError_t cudaImportExternalSemaphore(cudaExternalSemaphore_t* extSem_out, const struct cudaExternalSemaphoreHandleDesc* semHandleDesc);
MGPU_SIM_UNSUPPORTED(cudaDestroyExternalSemaphore, "graphics and external resource interoperability")
cudaError_t cudaDestroyExternalSemaphore(cudaExternalSemaphore_t extSem);

// Other runtime features.
MGPU_SIM_UNSUPPORTED(cudaMemcpy3DPeer, "other runtime features")
cudaError_t cudaMemcpy3DPeer(const struct cudaMemcpy3DPeerParms* p);
MGPU_SIM_UNSUPPORTED(cudaMemcpy3DPeerAsync, "other runtime features")
cudaError_t cudaMemcpy3DPeerAsync(const struct cudaMemcpy3DPeerParms* p, cudaStream_t stream = 0);
MGPU_SIM_UNSUPPORTED(cudaMemRangeGetAttribute, "other runtime features")
cudaError_t cudaMemRangeGetAttribute(void* data, size_t dataSize, enum cudaMemRangeAttribute attribute, const void* devPtr, size_t count);
MGPU_SIM_UNSUPPORTED(cudaEventRecordWithFlags, "other runtime features")
cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = 0, unsigned int flags = 0);
MGPU_SIM_UNSUPPORTED(cudaCtxResetPersistingL2Cache, "other runtime features")
cudaError_t cudaCtxResetPersistingL2Cache(void);
MGPU_SIM_UNSUPPORTED(cudaGetDriverEntryPoint, "other runtime features")
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void* *funcPtr, unsigned long long flags, enum cudaDriverEntryPointQueryResult* driverStatus);
MGPU_SIM_UNSUPPORTED(cudaDeviceFlushGPUDirectRDMAWrites, "other runtime features")
cudaError_t cudaDeviceFlushGPUDirectRDMAWrites(enum cudaFlushGPUDirectRDMAWritesTarget target, enum cudaFlushGPUDirectRDMAWritesScope scope);
MGPU_SIM_UNSUPPORTED(cudaLibraryLoadData, "other runtime features")
cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, enum cudaJitOption* jitOptions, void* *jitOptionsValues, unsigned int numJitOptions, enum cudaLibraryOption* libraryOptions, void**libraryOptionValues, unsigned int numLibraryOptions);
MGPU_SIM_UNSUPPORTED(cudaLibraryGetKernel, "other runtime features")
cudaError_t cudaLibraryGetKernel(cudaKernel_t* pKernel, cudaLibrary_t library, const char* name);
// The typed forms cuda_runtime.h adds to some of them.
template <class T>
MGPU_SIM_UNSUPPORTED(cudaLaunchKernel, "launches without <<<...>>>")
cudaError_t cudaLaunchKernel(const T* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem = 0,
                             cudaStream_t stream = 0);
template <class T>
MGPU_SIM_UNSUPPORTED(cudaLaunchCooperativeKernel, "cooperative launches")
cudaError_t cudaLaunchCooperativeKernel(const T* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem = 0,
                                        cudaStream_t stream = 0);
template <class T>
MGPU_SIM_UNSUPPORTED(cudaMallocAsync, "the stream-ordered allocator and memory pools")
cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaStream_t stream);
template <class T>
MGPU_SIM_UNSUPPORTED(cudaMallocAsync, "the stream-ordered allocator and memory pools")
cudaError_t cudaMallocAsync(T** devPtr, size_t size, cudaMemPool_t memPool, cudaStream_t stream);
template <class T>
MGPU_SIM_UNSUPPORTED(cudaCreateChannelDesc, "CUDA arrays, textures and surfaces")
struct cudaChannelFormatDesc cudaCreateChannelDesc();
MGPU_SIM_UNSUPPORTED(cudaCreateChannelDesc, "CUDA arrays, textures and surfaces")
struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f);
