#include "function_attributes.h"

#include <algorithm>

#include "device_properties.h"

namespace mgpu::sim::rt {

namespace {

constexpr int kWarpSize = 32;
constexpr int kRegisterAllocationUnit = 256;   // registers are handed to a warp in blocks of 256
constexpr std::size_t kSharedAllocationUnit = 128;

std::size_t round_up(std::size_t value, std::size_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

cudaFuncAttributes model_function_attributes(const DeviceSpec& device, int max_dynamic_shared) {
    cudaFuncAttributes attributes{};
    attributes.sharedSizeBytes = 0;
    attributes.constSizeBytes = 0;
    attributes.localSizeBytes = 0;
    attributes.maxThreadsPerBlock = device.max_threads_per_block;
    attributes.numRegs = kModelRegistersPerThread;
    attributes.ptxVersion = device.major * 10 + device.minor;
    attributes.binaryVersion = device.major * 10 + device.minor;
    attributes.cacheModeCA = 0;
    attributes.maxDynamicSharedSizeBytes = max_dynamic_shared;
    attributes.preferredShmemCarveout = -1;
    return attributes;
}

int resident_blocks_per_sm(const DeviceSpec& device, const cudaFuncAttributes& function, int block_size,
                           std::size_t dynamic_shared) {
    if (block_size <= 0 || block_size > function.maxThreadsPerBlock) return 0;
    if (dynamic_shared > static_cast<std::size_t>(function.maxDynamicSharedSizeBytes)) return 0;
    const int warps_per_block = (block_size + kWarpSize - 1) / kWarpSize;
    int blocks = std::min(max_blocks_per_sm(device), device.max_threads_per_sm / kWarpSize / warps_per_block);

    const int registers_per_warp =
        static_cast<int>(round_up(static_cast<std::size_t>(function.numRegs) * kWarpSize, kRegisterAllocationUnit));
    if (registers_per_warp > 0) {
        if (registers_per_warp * warps_per_block > device.regs_per_block) return 0;
        blocks = std::min(blocks, device.regs_per_block / registers_per_warp / warps_per_block);
    }

    const std::size_t shared_per_block =
        round_up(function.sharedSizeBytes + dynamic_shared + reserved_shared_per_block(device), kSharedAllocationUnit);
    blocks = std::min<std::size_t>(blocks, device.shared_mem_per_sm / shared_per_block);
    return std::max(blocks, 0);
}

}  // namespace mgpu::sim::rt
