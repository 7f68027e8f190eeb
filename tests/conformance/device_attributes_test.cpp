// cudaDeviceGetAttribute agrees with cudaGetDeviceProperties for every attribute that has a
// cudaDeviceProp field, on every preset; the compute mode is Default; values CUDA 13 does not
// define give 1; and an H200 reports, field by field, what deviceQuery prints for one.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "conformance_support.h"

namespace {

struct AttributeField {
    cudaDeviceAttr attr;
    long long (*read)(const cudaDeviceProp&);
};

#define FIELD(attr, expression) \
    AttributeField { attr, [](const cudaDeviceProp& p) -> long long { return static_cast<long long>(expression); } }

const std::vector<AttributeField> kFields = {
    FIELD(cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock),
    FIELD(cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0]),
    FIELD(cudaDevAttrMaxBlockDimY, p.maxThreadsDim[1]),
    FIELD(cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2]),
    FIELD(cudaDevAttrMaxGridDimX, p.maxGridSize[0]),
    FIELD(cudaDevAttrMaxGridDimY, p.maxGridSize[1]),
    FIELD(cudaDevAttrMaxGridDimZ, p.maxGridSize[2]),
    FIELD(cudaDevAttrMaxSharedMemoryPerBlock, p.sharedMemPerBlock),
    FIELD(cudaDevAttrTotalConstantMemory, p.totalConstMem),
    FIELD(cudaDevAttrWarpSize, p.warpSize),
    FIELD(cudaDevAttrMaxPitch, p.memPitch),
    FIELD(cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock),
    FIELD(cudaDevAttrTextureAlignment, p.textureAlignment),
    FIELD(cudaDevAttrMultiProcessorCount, p.multiProcessorCount),
    FIELD(cudaDevAttrIntegrated, p.integrated),
    FIELD(cudaDevAttrCanMapHostMemory, p.canMapHostMemory),
    FIELD(cudaDevAttrMaxTexture1DWidth, p.maxTexture1D),
    FIELD(cudaDevAttrMaxTexture2DWidth, p.maxTexture2D[0]),
    FIELD(cudaDevAttrMaxTexture2DHeight, p.maxTexture2D[1]),
    FIELD(cudaDevAttrMaxTexture3DWidth, p.maxTexture3D[0]),
    FIELD(cudaDevAttrMaxTexture3DHeight, p.maxTexture3D[1]),
    FIELD(cudaDevAttrMaxTexture3DDepth, p.maxTexture3D[2]),
    FIELD(cudaDevAttrMaxTexture2DLayeredWidth, p.maxTexture2DLayered[0]),
    FIELD(cudaDevAttrMaxTexture2DLayeredHeight, p.maxTexture2DLayered[1]),
    FIELD(cudaDevAttrMaxTexture2DLayeredLayers, p.maxTexture2DLayered[2]),
    FIELD(cudaDevAttrSurfaceAlignment, p.surfaceAlignment),
    FIELD(cudaDevAttrConcurrentKernels, p.concurrentKernels),
    FIELD(cudaDevAttrEccEnabled, p.ECCEnabled),
    FIELD(cudaDevAttrPciBusId, p.pciBusID),
    FIELD(cudaDevAttrPciDeviceId, p.pciDeviceID),
    FIELD(cudaDevAttrTccDriver, p.tccDriver),
    FIELD(cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth),
    FIELD(cudaDevAttrL2CacheSize, p.l2CacheSize),
    FIELD(cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor),
    FIELD(cudaDevAttrAsyncEngineCount, p.asyncEngineCount),
    FIELD(cudaDevAttrUnifiedAddressing, p.unifiedAddressing),
    FIELD(cudaDevAttrMaxTexture1DLayeredWidth, p.maxTexture1DLayered[0]),
    FIELD(cudaDevAttrMaxTexture1DLayeredLayers, p.maxTexture1DLayered[1]),
    FIELD(cudaDevAttrMaxTexture2DGatherWidth, p.maxTexture2DGather[0]),
    FIELD(cudaDevAttrMaxTexture2DGatherHeight, p.maxTexture2DGather[1]),
    FIELD(cudaDevAttrMaxTexture3DWidthAlt, p.maxTexture3DAlt[0]),
    FIELD(cudaDevAttrMaxTexture3DHeightAlt, p.maxTexture3DAlt[1]),
    FIELD(cudaDevAttrMaxTexture3DDepthAlt, p.maxTexture3DAlt[2]),
    FIELD(cudaDevAttrPciDomainId, p.pciDomainID),
    FIELD(cudaDevAttrTexturePitchAlignment, p.texturePitchAlignment),
    FIELD(cudaDevAttrMaxTextureCubemapWidth, p.maxTextureCubemap),
    FIELD(cudaDevAttrMaxTextureCubemapLayeredWidth, p.maxTextureCubemapLayered[0]),
    FIELD(cudaDevAttrMaxTextureCubemapLayeredLayers, p.maxTextureCubemapLayered[1]),
    FIELD(cudaDevAttrMaxSurface1DWidth, p.maxSurface1D),
    FIELD(cudaDevAttrMaxSurface2DWidth, p.maxSurface2D[0]),
    FIELD(cudaDevAttrMaxSurface2DHeight, p.maxSurface2D[1]),
    FIELD(cudaDevAttrMaxSurface3DWidth, p.maxSurface3D[0]),
    FIELD(cudaDevAttrMaxSurface3DHeight, p.maxSurface3D[1]),
    FIELD(cudaDevAttrMaxSurface3DDepth, p.maxSurface3D[2]),
    FIELD(cudaDevAttrMaxSurface1DLayeredWidth, p.maxSurface1DLayered[0]),
    FIELD(cudaDevAttrMaxSurface1DLayeredLayers, p.maxSurface1DLayered[1]),
    FIELD(cudaDevAttrMaxSurface2DLayeredWidth, p.maxSurface2DLayered[0]),
    FIELD(cudaDevAttrMaxSurface2DLayeredHeight, p.maxSurface2DLayered[1]),
    FIELD(cudaDevAttrMaxSurface2DLayeredLayers, p.maxSurface2DLayered[2]),
    FIELD(cudaDevAttrMaxSurfaceCubemapWidth, p.maxSurfaceCubemap),
    FIELD(cudaDevAttrMaxSurfaceCubemapLayeredWidth, p.maxSurfaceCubemapLayered[0]),
    FIELD(cudaDevAttrMaxSurfaceCubemapLayeredLayers, p.maxSurfaceCubemapLayered[1]),
    FIELD(cudaDevAttrMaxTexture2DLinearWidth, p.maxTexture2DLinear[0]),
    FIELD(cudaDevAttrMaxTexture2DLinearHeight, p.maxTexture2DLinear[1]),
    FIELD(cudaDevAttrMaxTexture2DLinearPitch, p.maxTexture2DLinear[2]),
    FIELD(cudaDevAttrMaxTexture2DMipmappedWidth, p.maxTexture2DMipmap[0]),
    FIELD(cudaDevAttrMaxTexture2DMipmappedHeight, p.maxTexture2DMipmap[1]),
    FIELD(cudaDevAttrComputeCapabilityMajor, p.major),
    FIELD(cudaDevAttrComputeCapabilityMinor, p.minor),
    FIELD(cudaDevAttrMaxTexture1DMipmappedWidth, p.maxTexture1DMipmap),
    FIELD(cudaDevAttrStreamPrioritiesSupported, p.streamPrioritiesSupported),
    FIELD(cudaDevAttrGlobalL1CacheSupported, p.globalL1CacheSupported),
    FIELD(cudaDevAttrLocalL1CacheSupported, p.localL1CacheSupported),
    FIELD(cudaDevAttrMaxSharedMemoryPerMultiprocessor, p.sharedMemPerMultiprocessor),
    FIELD(cudaDevAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor),
    FIELD(cudaDevAttrManagedMemory, p.managedMemory),
    FIELD(cudaDevAttrIsMultiGpuBoard, p.isMultiGpuBoard),
    FIELD(cudaDevAttrMultiGpuBoardGroupID, p.multiGpuBoardGroupID),
    FIELD(cudaDevAttrHostNativeAtomicSupported, p.hostNativeAtomicSupported),
    FIELD(cudaDevAttrPageableMemoryAccess, p.pageableMemoryAccess),
    FIELD(cudaDevAttrConcurrentManagedAccess, p.concurrentManagedAccess),
    FIELD(cudaDevAttrComputePreemptionSupported, p.computePreemptionSupported),
    FIELD(cudaDevAttrCanUseHostPointerForRegisteredMem, p.canUseHostPointerForRegisteredMem),
    FIELD(cudaDevAttrCooperativeLaunch, p.cooperativeLaunch),
    FIELD(cudaDevAttrMaxSharedMemoryPerBlockOptin, p.sharedMemPerBlockOptin),
    FIELD(cudaDevAttrHostRegisterSupported, p.hostRegisterSupported),
    FIELD(cudaDevAttrPageableMemoryAccessUsesHostPageTables, p.pageableMemoryAccessUsesHostPageTables),
    FIELD(cudaDevAttrDirectManagedMemAccessFromHost, p.directManagedMemAccessFromHost),
    FIELD(cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor),
    FIELD(cudaDevAttrMaxPersistingL2CacheSize, p.persistingL2CacheMaxSize),
    FIELD(cudaDevAttrMaxAccessPolicyWindowSize, p.accessPolicyMaxWindowSize),
    FIELD(cudaDevAttrReservedSharedMemoryPerBlock, p.reservedSharedMemPerBlock),
    FIELD(cudaDevAttrSparseCudaArraySupported, p.sparseCudaArraySupported),
    FIELD(cudaDevAttrHostRegisterReadOnlySupported, p.hostRegisterReadOnlySupported),
    FIELD(cudaDevAttrTimelineSemaphoreInteropSupported, p.timelineSemaphoreInteropSupported),
    FIELD(cudaDevAttrMemoryPoolsSupported, p.memoryPoolsSupported),
    FIELD(cudaDevAttrGPUDirectRDMASupported, p.gpuDirectRDMASupported),
    FIELD(cudaDevAttrGPUDirectRDMAFlushWritesOptions, p.gpuDirectRDMAFlushWritesOptions),
    FIELD(cudaDevAttrGPUDirectRDMAWritesOrdering, p.gpuDirectRDMAWritesOrdering),
    FIELD(cudaDevAttrMemoryPoolSupportedHandleTypes, p.memoryPoolSupportedHandleTypes),
    FIELD(cudaDevAttrClusterLaunch, p.clusterLaunch),
    FIELD(cudaDevAttrDeferredMappingCudaArraySupported, p.deferredMappingCudaArraySupported),
    FIELD(cudaDevAttrIpcEventSupport, p.ipcEventSupported),
    FIELD(cudaDevAttrNumaConfig, p.deviceNumaConfig),
    FIELD(cudaDevAttrNumaId, p.deviceNumaId),
    FIELD(cudaDevAttrMpsEnabled, p.mpsEnabled),
    FIELD(cudaDevAttrHostNumaId, p.hostNumaId),
    FIELD(cudaDevAttrGpuPciDeviceId, static_cast<int>(p.gpuPciDeviceID)),
    FIELD(cudaDevAttrGpuPciSubsystemId, static_cast<int>(p.gpuPciSubsystemID)),
    FIELD(cudaDevAttrHostNumaMultinodeIpcSupported, p.hostNumaMultinodeIpcSupported),
};

#undef FIELD

int attribute(cudaDeviceAttr attr, int device) {
    int value = -12345;
    REQUIRE(cudaDeviceGetAttribute(&value, attr, device) == cudaSuccess);
    return value;
}

}  // namespace

TEST_CASE("every attribute with a cudaDeviceProp field agrees with cudaGetDeviceProperties, on every preset") {
    for (const std::string& preset : conformance::kGpuPresets) {
        if (!conformance::use_machine_if_hostable(preset)) continue;
        int count = 0;
        REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
        for (int device = 0; device < count; ++device) {
            CAPTURE(preset);
            CAPTURE(device);
            cudaDeviceProp p{};
            REQUIRE(cudaGetDeviceProperties(&p, device) == cudaSuccess);
            for (const AttributeField& field : kFields) {
                CAPTURE(static_cast<int>(field.attr));
                const long long expected = field.read(p);
                // The attribute is an int: sizes beyond INT_MAX read as INT_MAX.
                CHECK(attribute(field.attr, device) == (expected > 2147483647LL ? 2147483647LL : expected));
            }
        }
    }
}

TEST_CASE("the compute mode is Default, with cudaComputeMode's CUDA 13 values") {
    static_assert(cudaComputeModeDefault == 0 && cudaComputeModeExclusive == 1 && cudaComputeModeProhibited == 2 &&
                  cudaComputeModeExclusiveProcess == 3);
    conformance::use_machine("h200");
    CHECK(attribute(cudaDevAttrComputeMode, 0) == cudaComputeModeDefault);
}

TEST_CASE("attribute values far outside CUDA 13's list give cudaErrorInvalidValue (1)") {
    conformance::use_machine("h200");
    for (int undefined : {-1, 1000, 100000}) {
        CAPTURE(undefined);
        int value = 0;
        CHECK(cudaDeviceGetAttribute(&value, static_cast<cudaDeviceAttr>(undefined), 0) == cudaErrorInvalidValue);
        CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    }
}

// What deviceQuery prints for an H200 (CUDA 13.0, driver 580): the fields it reads, one by one.
TEST_CASE("an H200 reports what deviceQuery prints for one") {
    conformance::use_machine("h200");
    cudaDeviceProp p{};
    REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
    int driver = 0, runtime = 0;
    REQUIRE(cudaDriverGetVersion(&driver) == cudaSuccess);
    REQUIRE(cudaRuntimeGetVersion(&runtime) == cudaSuccess);
    CHECK(driver / 1000 == 13);
    CHECK(runtime == 13000);
    CHECK(attribute(cudaDevAttrClockRate, 0) == 1980000);
    CHECK(attribute(cudaDevAttrMemoryClockRate, 0) == 3201000);
    CHECK(p.memoryBusWidth == 6016);
    CHECK(p.l2CacheSize == 62914560);
    CHECK(p.maxTexture1D == 131072);
    CHECK(p.maxTexture2D[0] == 131072);
    CHECK(p.maxTexture2D[1] == 65536);
    CHECK(p.maxTexture3D[0] == 16384);
    CHECK(p.maxTexture3D[1] == 16384);
    CHECK(p.maxTexture3D[2] == 16384);
    CHECK(p.maxTexture1DLayered[0] == 32768);
    CHECK(p.maxTexture1DLayered[1] == 2048);
    CHECK(p.maxTexture2DLayered[0] == 32768);
    CHECK(p.maxTexture2DLayered[1] == 32768);
    CHECK(p.maxTexture2DLayered[2] == 2048);
    CHECK(p.totalConstMem == 65536);
    CHECK(p.sharedMemPerBlock == 49152);
    CHECK(p.sharedMemPerMultiprocessor == 233472);
    CHECK(p.regsPerBlock == 65536);
    CHECK(p.warpSize == 32);
    CHECK(p.maxThreadsPerMultiProcessor == 2048);
    CHECK(p.maxThreadsPerBlock == 1024);
    CHECK(p.memPitch == 2147483647);
    CHECK(p.textureAlignment == 512);
    CHECK(attribute(cudaDevAttrGpuOverlap, 0) == 1);
    CHECK(p.asyncEngineCount == 3);
    CHECK(attribute(cudaDevAttrKernelExecTimeout, 0) == 0);
    CHECK(p.integrated == 0);
    CHECK(p.canMapHostMemory == 1);
    CHECK(p.surfaceAlignment != 0);
    CHECK(p.ECCEnabled == 1);
    CHECK(p.unifiedAddressing == 1);
    CHECK(p.managedMemory == 1);
    CHECK(p.computePreemptionSupported == 1);
    CHECK(p.cooperativeLaunch == 1);
    CHECK(p.maxBlocksPerMultiProcessor == 32);
    CHECK(p.regsPerMultiprocessor == 65536);
    CHECK(p.reservedSharedMemPerBlock == 1024);
    CHECK(p.clusterLaunch == 1);
}
