// device-report: what deviceQuery-style programs print, from a plain C++ file built by the host
// compiler (no nvcc, so no kernels), checking as it goes that every property read twice (from
// cudaGetDeviceProperties and from cudaDeviceGetAttribute) reads the same. Exit status: 0 when
// every device answered consistently, 1 otherwise or when no device is visible.
#include <cuda_runtime.h>

#include "sample_helpers.h"

namespace {

int failures = 0;

void agree(const char* what, long long from_properties, int device, cudaDeviceAttr attribute)
{
    int value = 0;
    checkSample(cudaDeviceGetAttribute(&value, attribute, device));
    if (value == from_properties) return;
    std::printf("  MISMATCH %s: properties %lld, attribute %d\n", what, from_properties, value);
    ++failures;
}

const char* compute_mode_name(int mode)
{
    switch (mode) {
    case cudaComputeModeDefault: return "Default (multiple host threads can use ::cudaSetDevice() with device simultaneously)";
    case cudaComputeModeProhibited: return "Prohibited (no host thread can use ::cudaSetDevice() with this device)";
    case cudaComputeModeExclusiveProcess: return "Exclusive Process (many threads in one process is able to use ::cudaSetDevice() with this device)";
    default: return "Unknown";
    }
}

}  // namespace

int main()
{
    int count = 0;
    const cudaError_t counted = cudaGetDeviceCount(&count);
    if (counted != cudaSuccess) {
        std::printf("cudaGetDeviceCount returned %d\n-> %s\nResult = FAIL\n", static_cast<int>(counted),
                    cudaGetErrorString(counted));
        return EXIT_FAILURE;
    }
    std::printf("Detected %d CUDA Capable device(s)\n", count);
    int driver = 0, runtime = 0;
    checkSample(cudaDriverGetVersion(&driver));
    checkSample(cudaRuntimeGetVersion(&runtime));

    for (int device = 0; device < count; ++device) {
        cudaDeviceProp prop;
        checkSample(cudaGetDeviceProperties(&prop, device));
        int clock_khz = 0, memory_clock_khz = 0;
        checkSample(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
        checkSample(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device));
        std::printf("\nDevice %d: \"%s\"\n", device, prop.name);
        std::printf("  CUDA Driver Version / Runtime Version          %d.%d / %d.%d\n", driver / 1000,
                    (driver % 100) / 10, runtime / 1000, (runtime % 100) / 10);
        std::printf("  CUDA Capability Major/Minor version number:    %d.%d\n", prop.major, prop.minor);
        std::printf("  Total amount of global memory:                 %.0f MBytes (%llu bytes)\n",
                    static_cast<double>(prop.totalGlobalMem) / 1048576.0,
                    static_cast<unsigned long long>(prop.totalGlobalMem));
        std::printf("  Multiprocessors:                               %d\n", prop.multiProcessorCount);
        std::printf("  GPU Max Clock rate:                            %.0f MHz (%0.2f GHz)\n", clock_khz * 1e-3,
                    clock_khz * 1e-6);
        std::printf("  Memory Clock rate:                             %.0f Mhz\n", memory_clock_khz * 1e-3);
        std::printf("  Memory Bus Width:                              %d-bit\n", prop.memoryBusWidth);
        std::printf("  L2 Cache Size:                                 %d bytes\n", prop.l2CacheSize);
        std::printf("  Total amount of shared memory per block:       %zu bytes\n", prop.sharedMemPerBlock);
        std::printf("  Warp size:                                     %d\n", prop.warpSize);
        std::printf("  Maximum number of threads per block:           %d\n", prop.maxThreadsPerBlock);
        std::printf("  Max dimension size of a grid size    (x,y,z): (%d, %d, %d)\n", prop.maxGridSize[0],
                    prop.maxGridSize[1], prop.maxGridSize[2]);
        std::printf("  Concurrent copy and kernel execution:          %s with %d copy engine(s)\n",
                    prop.asyncEngineCount > 0 ? "Yes" : "No", prop.asyncEngineCount);
        std::printf("  Device supports Unified Addressing (UVA):      %s\n", prop.unifiedAddressing ? "Yes" : "No");
        std::printf("  Device supports Managed Memory:                %s\n", prop.managedMemory ? "Yes" : "No");
        std::printf("  Device has ECC support:                        %s\n", prop.ECCEnabled ? "Enabled" : "Disabled");
        std::printf("  Device PCI Domain ID / Bus ID / location ID:   %d / %d / %d\n", prop.pciDomainID, prop.pciBusID,
                    prop.pciDeviceID);
        // CUDA 13 took computeMode out of cudaDeviceProp: the attribute is the way to read it.
        int mode = -1;
        checkSample(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device));
        std::printf("  Compute Mode:\n     < %s >\n", compute_mode_name(mode));

        agree("major", prop.major, device, cudaDevAttrComputeCapabilityMajor);
        agree("minor", prop.minor, device, cudaDevAttrComputeCapabilityMinor);
        agree("multiProcessorCount", prop.multiProcessorCount, device, cudaDevAttrMultiProcessorCount);
        agree("memoryBusWidth", prop.memoryBusWidth, device, cudaDevAttrGlobalMemoryBusWidth);
        agree("l2CacheSize", prop.l2CacheSize, device, cudaDevAttrL2CacheSize);
        agree("warpSize", prop.warpSize, device, cudaDevAttrWarpSize);
        agree("maxThreadsPerBlock", prop.maxThreadsPerBlock, device, cudaDevAttrMaxThreadsPerBlock);
        agree("maxGridSize[0]", prop.maxGridSize[0], device, cudaDevAttrMaxGridDimX);
        agree("asyncEngineCount", prop.asyncEngineCount, device, cudaDevAttrAsyncEngineCount);
        agree("unifiedAddressing", prop.unifiedAddressing, device, cudaDevAttrUnifiedAddressing);
        agree("managedMemory", prop.managedMemory, device, cudaDevAttrManagedMemory);
        agree("ECCEnabled", prop.ECCEnabled, device, cudaDevAttrEccEnabled);
        agree("pciBusID", prop.pciBusID, device, cudaDevAttrPciBusId);
        agree("pciDomainID", prop.pciDomainID, device, cudaDevAttrPciDomainId);
        agree("sharedMemPerBlock", static_cast<long long>(prop.sharedMemPerBlock), device,
              cudaDevAttrMaxSharedMemoryPerBlock);
    }

    // Peer access between every pair, as deviceQuery lists it for machines with two or more GPUs.
    for (int a = 0; a < count; ++a)
        for (int b = 0; b < count; ++b) {
            if (a == b) continue;
            int can = 0;
            checkSample(cudaDeviceCanAccessPeer(&can, a, b));
            std::printf("> Peer access from GPU%d -> GPU%d : %s\n", a, b, can ? "Yes" : "No");
        }
    std::printf("\nfastest device: %d\n", count > 0 ? sample_fastest_device() : -1);
    std::printf("Result = %s\n", failures == 0 && count > 0 ? "PASS" : "FAIL");
    return failures == 0 && count > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
