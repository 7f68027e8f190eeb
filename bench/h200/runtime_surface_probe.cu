// What the real CUDA runtime answers on one GPU for the surface the simulator's headers offer real
// programs: every cudaDeviceProp field and cudaDeviceGetAttribute value, cudaFuncGetAttributes and
// the occupancy calculator for small kernels, the profiler calls, managed memory's checks, pitched
// copies' error codes, where host functions and stream callbacks run, and every error code's name
// and message. Prints one line per answer, to check the conformance tests' expected values against.
//   nvcc -std=c++20 -arch=sm_90 -O3 runtime_surface_probe.cu -o runtime_surface_probe && ./runtime_surface_probe
#include <cuda_runtime.h>
#include <cuda_profiler_api.h>
#include <cstdio>
#include <thread>
#include <sstream>
#include <string>

__global__ void empty_kernel() {}
__global__ void delay_kernel(volatile int* flag, unsigned long long timeout = 10000000) {
  long long start = clock64();
  while (*flag == 0 && clock64() - start < (long long)timeout) {}
}
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void grid_stride_add(float* out, const float* a, const float* b, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) out[i] = a[i] + b[i];
}
__global__ void static_shared(float* out) {
  __shared__ float tile[1024];
  tile[threadIdx.x] = threadIdx.x; __syncthreads(); out[threadIdx.x] = tile[1023 - threadIdx.x];
}
__global__ void dyn_reduce(const float* in, float* out, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x; s[threadIdx.x] = i < n ? in[i] : 0; __syncthreads();
  for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st]; __syncthreads(); }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
__global__ void __launch_bounds__(256) bounded(float* out) { out[threadIdx.x] = 1; }
__global__ void local_array(float* out, int k) { float a[64]; for (int i = 0; i < 64; ++i) a[i] = i * k; out[threadIdx.x] = a[(threadIdx.x * k) & 63]; }

template <class K> void func_report(const char* name, K k) {
  cudaFuncAttributes a{};
  cudaError_t e = cudaFuncGetAttributes(&a, k);
  printf("func %s rc=%d shared=%zu const=%zu local=%zu maxThreads=%d regs=%d ptx=%d bin=%d cacheCA=%d maxDyn=%d carve=%d cluster=%d reqW=%d nonport=%d sched=%d\n",
    name, e, a.sharedSizeBytes, a.constSizeBytes, a.localSizeBytes, a.maxThreadsPerBlock, a.numRegs, a.ptxVersion, a.binaryVersion,
    a.cacheModeCA, a.maxDynamicSharedSizeBytes, a.preferredShmemCarveout, a.clusterDimMustBeSet, a.requiredClusterWidth, a.nonPortableClusterSizeAllowed, a.clusterSchedulingPolicyPreference);
  int minGrid = -1, block = -1;
  e = cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, k, 0, 0);
  printf("occ %s potential rc=%d minGrid=%d block=%d\n", name, e, minGrid, block);
  e = cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, k, 4096, 0);
  printf("occ %s potential smem4096 rc=%d minGrid=%d block=%d\n", name, e, minGrid, block);
  e = cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, k, 0, 128);
  printf("occ %s potential limit128 rc=%d minGrid=%d block=%d\n", name, e, minGrid, block);
  for (int bs : {1, 32, 64, 96, 128, 256, 512, 768, 1024, 1025, 0}) {
    for (size_t sm : {(size_t)0, (size_t)16384, (size_t)49152, (size_t)49153, (size_t)232448 }) {
      int nb = -7; e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, bs, sm);
      printf("occ %s active bs=%d smem=%zu rc=%d blocks=%d\n", name, bs, sm, e, nb);
    }
  }
  size_t dyn = 0; e = cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, k, 2, 256);
  printf("occ %s availdyn 2x256 rc=%d %zu\n", name, e, dyn);
}

int main() {
  int rv = 0, dv = 0; cudaRuntimeGetVersion(&rv); cudaDriverGetVersion(&dv);
  printf("runtime %d driver %d CUDART_VERSION %d\n", rv, dv, CUDART_VERSION);
#ifdef __CUDACC_VER_MAJOR__
  printf("nvcc %d.%d.%d\n", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, __CUDACC_VER_BUILD__);
#endif
  cudaDeviceProp p{}; cudaGetDeviceProperties(&p, 0);
  printf("prop.name = %s\n", p.name);
  printf("prop.luid = "); for (int i = 0; i < 8; ++i) printf("%02x", (unsigned char)p.luid[i]); printf("\n");
  printf("prop.luidDeviceNodeMask = %lld\n", (long long)p.luidDeviceNodeMask);
  printf("prop.totalGlobalMem = %lld\n", (long long)p.totalGlobalMem);
  printf("prop.sharedMemPerBlock = %lld\n", (long long)p.sharedMemPerBlock);
  printf("prop.regsPerBlock = %lld\n", (long long)p.regsPerBlock);
  printf("prop.warpSize = %lld\n", (long long)p.warpSize);
  printf("prop.memPitch = %lld\n", (long long)p.memPitch);
  printf("prop.maxThreadsPerBlock = %lld\n", (long long)p.maxThreadsPerBlock);
  printf("prop.maxThreadsDim[0] = %lld\n", (long long)p.maxThreadsDim[0]);
  printf("prop.maxThreadsDim[1] = %lld\n", (long long)p.maxThreadsDim[1]);
  printf("prop.maxThreadsDim[2] = %lld\n", (long long)p.maxThreadsDim[2]);
  printf("prop.maxGridSize[0] = %lld\n", (long long)p.maxGridSize[0]);
  printf("prop.maxGridSize[1] = %lld\n", (long long)p.maxGridSize[1]);
  printf("prop.maxGridSize[2] = %lld\n", (long long)p.maxGridSize[2]);
  printf("prop.totalConstMem = %lld\n", (long long)p.totalConstMem);
  printf("prop.major = %lld\n", (long long)p.major);
  printf("prop.minor = %lld\n", (long long)p.minor);
  printf("prop.textureAlignment = %lld\n", (long long)p.textureAlignment);
  printf("prop.texturePitchAlignment = %lld\n", (long long)p.texturePitchAlignment);
  printf("prop.multiProcessorCount = %lld\n", (long long)p.multiProcessorCount);
  printf("prop.integrated = %lld\n", (long long)p.integrated);
  printf("prop.canMapHostMemory = %lld\n", (long long)p.canMapHostMemory);
  printf("prop.maxTexture1D = %lld\n", (long long)p.maxTexture1D);
  printf("prop.maxTexture1DMipmap = %lld\n", (long long)p.maxTexture1DMipmap);
  printf("prop.maxTexture2D[0] = %lld\n", (long long)p.maxTexture2D[0]);
  printf("prop.maxTexture2D[1] = %lld\n", (long long)p.maxTexture2D[1]);
  printf("prop.maxTexture2DMipmap[0] = %lld\n", (long long)p.maxTexture2DMipmap[0]);
  printf("prop.maxTexture2DMipmap[1] = %lld\n", (long long)p.maxTexture2DMipmap[1]);
  printf("prop.maxTexture2DLinear[0] = %lld\n", (long long)p.maxTexture2DLinear[0]);
  printf("prop.maxTexture2DLinear[1] = %lld\n", (long long)p.maxTexture2DLinear[1]);
  printf("prop.maxTexture2DLinear[2] = %lld\n", (long long)p.maxTexture2DLinear[2]);
  printf("prop.maxTexture2DGather[0] = %lld\n", (long long)p.maxTexture2DGather[0]);
  printf("prop.maxTexture2DGather[1] = %lld\n", (long long)p.maxTexture2DGather[1]);
  printf("prop.maxTexture3D[0] = %lld\n", (long long)p.maxTexture3D[0]);
  printf("prop.maxTexture3D[1] = %lld\n", (long long)p.maxTexture3D[1]);
  printf("prop.maxTexture3D[2] = %lld\n", (long long)p.maxTexture3D[2]);
  printf("prop.maxTexture3DAlt[0] = %lld\n", (long long)p.maxTexture3DAlt[0]);
  printf("prop.maxTexture3DAlt[1] = %lld\n", (long long)p.maxTexture3DAlt[1]);
  printf("prop.maxTexture3DAlt[2] = %lld\n", (long long)p.maxTexture3DAlt[2]);
  printf("prop.maxTextureCubemap = %lld\n", (long long)p.maxTextureCubemap);
  printf("prop.maxTexture1DLayered[0] = %lld\n", (long long)p.maxTexture1DLayered[0]);
  printf("prop.maxTexture1DLayered[1] = %lld\n", (long long)p.maxTexture1DLayered[1]);
  printf("prop.maxTexture2DLayered[0] = %lld\n", (long long)p.maxTexture2DLayered[0]);
  printf("prop.maxTexture2DLayered[1] = %lld\n", (long long)p.maxTexture2DLayered[1]);
  printf("prop.maxTexture2DLayered[2] = %lld\n", (long long)p.maxTexture2DLayered[2]);
  printf("prop.maxTextureCubemapLayered[0] = %lld\n", (long long)p.maxTextureCubemapLayered[0]);
  printf("prop.maxTextureCubemapLayered[1] = %lld\n", (long long)p.maxTextureCubemapLayered[1]);
  printf("prop.maxSurface1D = %lld\n", (long long)p.maxSurface1D);
  printf("prop.maxSurface2D[0] = %lld\n", (long long)p.maxSurface2D[0]);
  printf("prop.maxSurface2D[1] = %lld\n", (long long)p.maxSurface2D[1]);
  printf("prop.maxSurface3D[0] = %lld\n", (long long)p.maxSurface3D[0]);
  printf("prop.maxSurface3D[1] = %lld\n", (long long)p.maxSurface3D[1]);
  printf("prop.maxSurface3D[2] = %lld\n", (long long)p.maxSurface3D[2]);
  printf("prop.maxSurface1DLayered[0] = %lld\n", (long long)p.maxSurface1DLayered[0]);
  printf("prop.maxSurface1DLayered[1] = %lld\n", (long long)p.maxSurface1DLayered[1]);
  printf("prop.maxSurface2DLayered[0] = %lld\n", (long long)p.maxSurface2DLayered[0]);
  printf("prop.maxSurface2DLayered[1] = %lld\n", (long long)p.maxSurface2DLayered[1]);
  printf("prop.maxSurface2DLayered[2] = %lld\n", (long long)p.maxSurface2DLayered[2]);
  printf("prop.maxSurfaceCubemap = %lld\n", (long long)p.maxSurfaceCubemap);
  printf("prop.maxSurfaceCubemapLayered[0] = %lld\n", (long long)p.maxSurfaceCubemapLayered[0]);
  printf("prop.maxSurfaceCubemapLayered[1] = %lld\n", (long long)p.maxSurfaceCubemapLayered[1]);
  printf("prop.surfaceAlignment = %lld\n", (long long)p.surfaceAlignment);
  printf("prop.concurrentKernels = %lld\n", (long long)p.concurrentKernels);
  printf("prop.ECCEnabled = %lld\n", (long long)p.ECCEnabled);
  printf("prop.pciBusID = %lld\n", (long long)p.pciBusID);
  printf("prop.pciDeviceID = %lld\n", (long long)p.pciDeviceID);
  printf("prop.pciDomainID = %lld\n", (long long)p.pciDomainID);
  printf("prop.tccDriver = %lld\n", (long long)p.tccDriver);
  printf("prop.asyncEngineCount = %lld\n", (long long)p.asyncEngineCount);
  printf("prop.unifiedAddressing = %lld\n", (long long)p.unifiedAddressing);
  printf("prop.memoryBusWidth = %lld\n", (long long)p.memoryBusWidth);
  printf("prop.l2CacheSize = %lld\n", (long long)p.l2CacheSize);
  printf("prop.persistingL2CacheMaxSize = %lld\n", (long long)p.persistingL2CacheMaxSize);
  printf("prop.maxThreadsPerMultiProcessor = %lld\n", (long long)p.maxThreadsPerMultiProcessor);
  printf("prop.streamPrioritiesSupported = %lld\n", (long long)p.streamPrioritiesSupported);
  printf("prop.globalL1CacheSupported = %lld\n", (long long)p.globalL1CacheSupported);
  printf("prop.localL1CacheSupported = %lld\n", (long long)p.localL1CacheSupported);
  printf("prop.sharedMemPerMultiprocessor = %lld\n", (long long)p.sharedMemPerMultiprocessor);
  printf("prop.regsPerMultiprocessor = %lld\n", (long long)p.regsPerMultiprocessor);
  printf("prop.managedMemory = %lld\n", (long long)p.managedMemory);
  printf("prop.isMultiGpuBoard = %lld\n", (long long)p.isMultiGpuBoard);
  printf("prop.multiGpuBoardGroupID = %lld\n", (long long)p.multiGpuBoardGroupID);
  printf("prop.hostNativeAtomicSupported = %lld\n", (long long)p.hostNativeAtomicSupported);
  printf("prop.pageableMemoryAccess = %lld\n", (long long)p.pageableMemoryAccess);
  printf("prop.concurrentManagedAccess = %lld\n", (long long)p.concurrentManagedAccess);
  printf("prop.computePreemptionSupported = %lld\n", (long long)p.computePreemptionSupported);
  printf("prop.canUseHostPointerForRegisteredMem = %lld\n", (long long)p.canUseHostPointerForRegisteredMem);
  printf("prop.cooperativeLaunch = %lld\n", (long long)p.cooperativeLaunch);
  printf("prop.sharedMemPerBlockOptin = %lld\n", (long long)p.sharedMemPerBlockOptin);
  printf("prop.pageableMemoryAccessUsesHostPageTables = %lld\n", (long long)p.pageableMemoryAccessUsesHostPageTables);
  printf("prop.directManagedMemAccessFromHost = %lld\n", (long long)p.directManagedMemAccessFromHost);
  printf("prop.maxBlocksPerMultiProcessor = %lld\n", (long long)p.maxBlocksPerMultiProcessor);
  printf("prop.accessPolicyMaxWindowSize = %lld\n", (long long)p.accessPolicyMaxWindowSize);
  printf("prop.reservedSharedMemPerBlock = %lld\n", (long long)p.reservedSharedMemPerBlock);
  printf("prop.hostRegisterSupported = %lld\n", (long long)p.hostRegisterSupported);
  printf("prop.sparseCudaArraySupported = %lld\n", (long long)p.sparseCudaArraySupported);
  printf("prop.hostRegisterReadOnlySupported = %lld\n", (long long)p.hostRegisterReadOnlySupported);
  printf("prop.timelineSemaphoreInteropSupported = %lld\n", (long long)p.timelineSemaphoreInteropSupported);
  printf("prop.memoryPoolsSupported = %lld\n", (long long)p.memoryPoolsSupported);
  printf("prop.gpuDirectRDMASupported = %lld\n", (long long)p.gpuDirectRDMASupported);
  printf("prop.gpuDirectRDMAFlushWritesOptions = %lld\n", (long long)p.gpuDirectRDMAFlushWritesOptions);
  printf("prop.gpuDirectRDMAWritesOrdering = %lld\n", (long long)p.gpuDirectRDMAWritesOrdering);
  printf("prop.memoryPoolSupportedHandleTypes = %lld\n", (long long)p.memoryPoolSupportedHandleTypes);
  printf("prop.deferredMappingCudaArraySupported = %lld\n", (long long)p.deferredMappingCudaArraySupported);
  printf("prop.ipcEventSupported = %lld\n", (long long)p.ipcEventSupported);
  printf("prop.clusterLaunch = %lld\n", (long long)p.clusterLaunch);
  printf("prop.unifiedFunctionPointers = %lld\n", (long long)p.unifiedFunctionPointers);
  printf("prop.deviceNumaConfig = %lld\n", (long long)p.deviceNumaConfig);
  printf("prop.deviceNumaId = %lld\n", (long long)p.deviceNumaId);
  printf("prop.mpsEnabled = %lld\n", (long long)p.mpsEnabled);
  printf("prop.hostNumaId = %lld\n", (long long)p.hostNumaId);
  printf("prop.gpuPciDeviceID = %lld\n", (long long)p.gpuPciDeviceID);
  printf("prop.gpuPciSubsystemID = %lld\n", (long long)p.gpuPciSubsystemID);
  printf("prop.hostNumaMultinodeIpcSupported = %lld\n", (long long)p.hostNumaMultinodeIpcSupported);
  for (int a = 0; a <= 150; ++a) { int v = -12345; cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, 0); printf("attr %d rc=%d value=%d\n", a, e, v); cudaGetLastError(); }
  func_report("empty", empty_kernel);
  func_report("delay", delay_kernel);
  func_report("saxpy", saxpy);
  func_report("grid_stride_add", grid_stride_add);
  func_report("static_shared", static_shared);
  func_report("dyn_reduce", dyn_reduce);
  func_report("bounded", bounded);
  func_report("local_array", local_array);
  { cudaFuncAttributes a{}; printf("funcattr null rc=%d\n", cudaFuncGetAttributes(&a, (const void*)nullptr)); cudaGetLastError();
    printf("funcattr host fn rc=%d\n", cudaFuncGetAttributes(&a, (const void*)&main)); cudaGetLastError(); }
  { int nb; printf("occ null rc=%d\n", cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void*)nullptr, 128, 0)); cudaGetLastError(); }
  printf("profiler start %d stop %d stop %d\n", cudaProfilerStart(), cudaProfilerStop(), cudaProfilerStop());
  // managed memory
  { void* m = nullptr; cudaError_t e;
    e = cudaMallocManaged(&m, 1 << 20); printf("managed default rc=%d %p\n", e, m);
    ((int*)m)[0] = 5; printf("host write ok %d\n", ((int*)m)[0]);
    cudaPointerAttributes pa{}; e = cudaPointerGetAttributes(&pa, m); printf("managed attrs rc=%d type=%d dev=%d dp=%d hp=%d\n", e, pa.type, pa.device, pa.devicePointer == m, pa.hostPointer == m);
    cudaMemLocation loc{}; loc.type = cudaMemLocationTypeDevice; loc.id = 0;
    printf("prefetch rc=%d\n", cudaMemPrefetchAsync(m, 1 << 20, loc, 0, 0));
    printf("advise rc=%d\n", cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetReadMostly, loc));
    printf("advise preferred rc=%d\n", cudaMemAdvise(m, 1 << 20, cudaMemAdviseSetPreferredLocation, loc));
    loc.type = cudaMemLocationTypeHost; loc.id = 0;
    printf("prefetch host rc=%d\n", cudaMemPrefetchAsync(m, 1 << 20, loc, 0, 0)); cudaGetLastError();
    printf("prefetch non-managed rc=%d\n", cudaMemPrefetchAsync(&rv, 4, loc, 0, 0)); cudaGetLastError();
    printf("free rc=%d\n", cudaFree(m));
    void* q = nullptr;
    e = cudaMallocManaged(&q, 1024, cudaMemAttachHost); printf("managed attachHost rc=%d\n", e); cudaFree(q); cudaGetLastError();
    e = cudaMallocManaged(&q, 1024, 0); printf("managed flags0 rc=%d\n", e); cudaGetLastError();
    e = cudaMallocManaged(&q, 1024, 3); printf("managed flags3 rc=%d\n", e); cudaGetLastError();
    e = cudaMallocManaged(&q, 1024, cudaMemAttachSingle); printf("managed attachSingle rc=%d\n", e); cudaGetLastError();
    q = (void*)0x1; e = cudaMallocManaged(&q, 0); printf("managed size0 rc=%d q=%p\n", e, q); cudaGetLastError();
    e = cudaMallocManaged((void**)nullptr, 16); printf("managed nullptr rc=%d\n", e); cudaGetLastError();
    int* k; cudaMallocManaged(&k, 256 * sizeof(int)); for (int i = 0; i < 256; ++i) k[i] = i;
    cudaStream_t s; cudaStreamCreate(&s);
    printf("attach single rc=%d\n", cudaStreamAttachMemAsync(s, k, 0, cudaMemAttachSingle)); cudaGetLastError();
    cudaStreamSynchronize(s); cudaStreamDestroy(s); cudaFree(k);
  }
  // 2D copies
  { char* d; size_t pitch = 0; cudaError_t e = cudaMallocPitch((void**)&d, &pitch, 100, 10); printf("mallocpitch rc=%d pitch=%zu\n", e, pitch);
    char h[1000]; for (int i = 0; i < 1000; ++i) h[i] = (char)i;
    printf("2D ok rc=%d\n", cudaMemcpy2D(d, pitch, h, 100, 100, 10, cudaMemcpyHostToDevice));
    printf("2D width>dpitch rc=%d\n", cudaMemcpy2D(d, 50, h, 100, 100, 10, cudaMemcpyHostToDevice)); cudaGetLastError();
    printf("2D width>spitch rc=%d\n", cudaMemcpy2D(d, pitch, h, 50, 100, 10, cudaMemcpyHostToDevice)); cudaGetLastError();
    printf("2D height0 rc=%d\n", cudaMemcpy2D(d, pitch, h, 100, 100, 0, cudaMemcpyHostToDevice)); cudaGetLastError();
    printf("2D width0 rc=%d\n", cudaMemcpy2D(d, pitch, h, 100, 0, 10, cudaMemcpyHostToDevice)); cudaGetLastError();
    printf("2D huge pitch rc=%d\n", cudaMemcpy2D(d, (size_t)1 << 32, h, 100, 100, 1, cudaMemcpyHostToDevice)); cudaGetLastError();
    printf("2D bad kind rc=%d\n", cudaMemcpy2D(d, pitch, h, 100, 100, 10, (cudaMemcpyKind)7)); cudaGetLastError();
    printf("2D async rc=%d\n", cudaMemcpy2DAsync(d, pitch, h, 100, 100, 10, cudaMemcpyHostToDevice, 0)); cudaDeviceSynchronize();
    printf("memset2D rc=%d\n", cudaMemset2D(d, pitch, 7, 100, 10));
    printf("memset2D width>pitch rc=%d\n", cudaMemset2D(d, 50, 7, 100, 10)); cudaGetLastError();
    cudaExtent ext = make_cudaExtent(64, 4, 3); cudaPitchedPtr pp{};
    e = cudaMalloc3D(&pp, ext); printf("malloc3D rc=%d pitch=%zu xsize=%zu ysize=%zu\n", e, pp.pitch, pp.xsize, pp.ysize);
    cudaMemcpy3DParms m3{}; char h3[64 * 4 * 3]; m3.srcPtr = make_cudaPitchedPtr(h3, 64, 64, 4); m3.dstPtr = pp; m3.extent = ext; m3.kind = cudaMemcpyHostToDevice;
    printf("3D rc=%d\n", cudaMemcpy3D(&m3));
    m3.kind = cudaMemcpyDefault; printf("3D default rc=%d\n", cudaMemcpy3D(&m3));
    cudaMemcpy3DParms bad{}; printf("3D empty rc=%d\n", cudaMemcpy3D(&bad)); cudaGetLastError();
    printf("3D null rc=%d\n", cudaMemcpy3D(nullptr)); cudaGetLastError();
    cudaFree(pp.ptr); cudaFree(d);
  }
  // host functions
  { cudaStream_t s; cudaStreamCreate(&s);
    static std::thread::id cb_thread;
    std::ostringstream me; me << std::this_thread::get_id();
    printf("hostfunc rc=%d\n", cudaLaunchHostFunc(s, [](void* u) { cb_thread = std::this_thread::get_id(); int d = -1; printf("in hostfunc getdevice rc=%d\n", cudaGetDevice(&d)); printf("in hostfunc malloc rc=%d\n", cudaMalloc((void**)&u, 4)); }, nullptr));
    cudaStreamSynchronize(s);
    std::ostringstream them; them << cb_thread; printf("hostfunc same thread %d\n", me.str() == them.str());
    printf("callback rc=%d\n", cudaStreamAddCallback(s, [](cudaStream_t st, cudaError_t status, void*) { printf("callback status=%d stream-null=%d\n", status, st == nullptr); }, nullptr, 0));
    printf("callback flags1 rc=%d\n", cudaStreamAddCallback(s, [](cudaStream_t, cudaError_t, void*) {}, nullptr, 1)); cudaGetLastError();
    printf("hostfunc null fn rc=%d\n", cudaLaunchHostFunc(s, nullptr, nullptr)); cudaGetLastError();
    cudaStreamSynchronize(s);
    printf("callback legacy rc=%d\n", cudaStreamAddCallback(0, [](cudaStream_t st, cudaError_t status, void*) { printf("legacy callback status=%d stream-null=%d\n", status, st == nullptr); }, nullptr, 0));
    cudaDeviceSynchronize();
    cudaStreamDestroy(s);
  }
  for (int c = 0; c < 1000; ++c) { const char* n = cudaGetErrorName((cudaError_t)c); if (n && std::string(n) != "cudaErrorUnknown" || c == 999) printf("error %d|%s|%s\n", c, n, cudaGetErrorString((cudaError_t)c)); }
  printf("last error %d\n", cudaGetLastError());
}
