// Single-GPU profiles. The H200 is the machine cuda-facts.md was measured on; the A100 and L4
// values are what deviceQuery prints on those boards (CUDA 12.x drivers), and the shared-memory
// limits are the documented ones for compute capability 8.0 and 8.9.
#include <string>
#include <vector>

#include "topology/topology_detail.h"

namespace mgpu::sim {
namespace {

// Peak DRAM bandwidth from the memory clock and bus width (double data rate), in GB/s.
double peak_dram_gbps(const DeviceSpec& device)
{
    return device.memory_clock_khz * 1e3 * 2.0 * (device.memory_bus_width / 8.0) / 1e9;
}

// Only the H200 was measured. Other boards get the H200's achieved fraction of its peak DRAM
// bandwidth, so a memory-bound kernel runs on them in proportion to their datasheet speed.
void scale_speeds_from_h200(DeviceSpec& device)
{
    const DeviceSpec h200;
    const double ratio = peak_dram_gbps(device) / peak_dram_gbps(h200);
    device.memory_bandwidth_gbps = h200.memory_bandwidth_gbps * ratio;
    device.d2d_copy_gbps = h200.d2d_copy_gbps * ratio;
}

// No free-memory reading exists for these boards; the driver's share is taken as on the H200.
void free_memory_as_on_h200(DeviceSpec& device)
{
    device.free_mem = device.total_mem - topology_detail::kDriverReservedBytes;
}

DeviceSpec h200()
{
    return DeviceSpec{};   // DeviceSpec's defaults are the measured H200 profile
}

DeviceSpec a100_sxm4_80gb()
{
    DeviceSpec d;
    d.name = "NVIDIA A100-SXM4-80GB";
    d.total_mem = 85100068864ull;
    d.major = 8;
    d.minor = 0;
    d.sm_count = 108;
    d.clock_khz = 1410000;
    d.memory_clock_khz = 1593000;
    d.memory_bus_width = 5120;
    d.l2_cache_size = 41943040;
    d.shared_mem_per_block = 49152;
    d.shared_mem_per_block_optin = 166912;   // 163 KiB on compute capability 8.0
    d.shared_mem_per_sm = 167936;
    d.regs_per_block = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.async_engine_count = 3;
    d.pci_domain = 0;
    d.pci_bus = 104;
    d.pci_device = 0;
    free_memory_as_on_h200(d);
    scale_speeds_from_h200(d);
    return d;
}

DeviceSpec l4()
{
    DeviceSpec d;
    d.name = "NVIDIA L4";
    d.total_mem = 23612293120ull;
    d.major = 8;
    d.minor = 9;
    d.sm_count = 58;
    d.clock_khz = 2040000;
    d.memory_clock_khz = 6251000;
    d.memory_bus_width = 192;
    d.l2_cache_size = 50331648;
    d.shared_mem_per_block = 49152;
    d.shared_mem_per_block_optin = 101376;   // 99 KiB on compute capability 8.9
    d.shared_mem_per_sm = 102400;
    d.regs_per_block = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 1536;
    d.async_engine_count = 2;
    d.pci_domain = 0;
    d.pci_bus = 0;
    d.pci_device = 3;
    free_memory_as_on_h200(d);
    scale_speeds_from_h200(d);
    return d;
}

}  // namespace

std::vector<std::string> device_preset_names()
{
    return {"h200", "a100-sxm4-80gb", "l4"};
}

DeviceSpec device_preset(const std::string& name)
{
    if (name == "h200") return h200();
    if (name == "a100-sxm4-80gb") return a100_sxm4_80gb();
    if (name == "l4") return l4();
    std::string message = "unknown device preset \"" + name + "\"";
    if (auto near = topology_detail::closest_match(name, device_preset_names()))
        message += " (did you mean \"" + *near + "\"?)";
    message += "; the device presets are " + topology_detail::join_names(device_preset_names());
    throw TopologyError(message);
}

}  // namespace mgpu::sim
