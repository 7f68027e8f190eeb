// The description of a simulated machine: its devices, the links between them and the
// cost model that turns operations into modelled time. Built from a preset name or a JSON
// file (src/topology/, file format in src/topology/FORMAT.md), then narrowed by
// CUDA_VISIBLE_DEVICES.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace mgpu::sim {

struct DeviceSpec {
    std::string name = "NVIDIA H200";
    std::size_t total_mem = 150109880320ull;   // bytes (cudaDeviceProp::totalGlobalMem)
    std::size_t free_mem = 149557477376ull;    // what cudaMemGetInfo reports as free before any allocation
    int major = 9, minor = 0;
    int sm_count = 132;
    int clock_khz = 1980000;                   // cudaDevAttrClockRate
    int memory_clock_khz = 3201000;            // cudaDevAttrMemoryClockRate
    int memory_bus_width = 6016;
    int l2_cache_size = 62914560;
    std::size_t shared_mem_per_block = 49152;
    std::size_t shared_mem_per_block_optin = 232448;
    std::size_t shared_mem_per_sm = 233472;
    int regs_per_block = 65536;
    int max_threads_per_block = 1024;
    int max_threads_per_sm = 2048;
    int max_threads_dim[3] = {1024, 1024, 64};
    int max_grid_size[3] = {2147483647, 65535, 65535};
    int async_engine_count = 3;
    int pci_domain = 0, pci_bus = 0, pci_device = 6;
    double memory_bandwidth_gbps = 2740.0;     // a memory-bound kernel with 4-byte accesses (read + write bytes / s);
                                               // 16-byte accesses reach 2 x d2d_copy_gbps
    double d2d_copy_gbps = 2134.0;             // cudaMemcpy device to device, bytes copied / s
    std::string uuid;                          // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi -L
                                               // prints it; load_machine fills it in when empty

    bool operator==(const DeviceSpec&) const = default;
};

enum class LinkType { None, PCIe, NVLink };

// How a PCIe path between two GPUs runs, in nvidia-smi topo -m terms (nearest first).
enum class PciePath { PIX, PXB, PHB, NODE, SYS };

struct LinkSpec {
    LinkType type = LinkType::None;
    bool can_peer = false;          // cudaDeviceCanAccessPeer answer for this ordered pair
    double gbps = 0.0;              // one-way bandwidth of a peer copy with P2P enabled
    int perf_rank = 0;              // cudaDevP2PAttrPerformanceRank
    bool native_atomics = false;    // cudaDevP2PAttrNativeAtomicSupported
    int nvlinks = 0;                // NVLink only: links bonded between the pair (nvidia-smi's NV<n>)
    PciePath pcie_path = PciePath::SYS;   // PCIe only: how the path runs

    bool operator==(const LinkSpec&) const = default;
};

struct CostModel {
    double h2d_pinned_gbps = 55.3, h2d_pageable_gbps = 7.1;
    // Pageable device-to-host copies go through the driver's staging buffers and the host's page
    // state, so they vary between machines and runs: cuda-facts.md records 11.0 GB/s, an H200
    // measured 10.5-14.9 (bench/results/h200-calibration.md); 12.0 keeps both within 10-25%. Host-to-host
    // copies run at this speed too.
    double d2h_pinned_gbps = 55.2, d2h_pageable_gbps = 12.0;
    double staged_peer_gbps = 37.0;     // peer copy without P2P, staged through host memory
    // Fixed device time of a peer copy without P2P: the bytes go to host memory on one device's
    // engine and on from there on the other's, which waits for the first. Back-to-back 4-byte
    // copies took 11.1-19.6 us, 15.8 on average, on a public four-GPU NVLink server with P2P off
    // (p2pBandwidthLatencyTest, cuda-samples issue 230), against 1.8-2.3 us with P2P on.
    double staged_peer_latency_us = 15.8;
    // A launch holds the host 2.4-4.3 us (two H200 machines, bench/results/h200-host-costs.md); a tiny
    // kernel then keeps the device launch_us + kernel_min_us, the 4.4 us back to back of cuda-facts.md
    // (2.4-4.7 us measured on different machines).
    double launch_us = 2.8;             // host-side cost of a kernel launch
    double kernel_min_us = 1.6;         // shortest kernel on the device, beyond the launch
    double copy_latency_us = 2.0;       // fixed cost of a copy between two devices or within the host
    // Fixed device time of one copy or memset, from small ones queued back to back on two H200
    // machines (4 KiB to 1 MiB, bench/results/h200-host-costs.md). Memsets of up to a page run on the copy
    // engine; larger ones are a kernel and cost what a launch costs. A device-to-device copy call
    // costs the host d2d_memcpy_call_us, more than the device needs, so those rows (2.9-4.9 us) show
    // the host's pace; the device's own, 1.8 us, is from 4-byte copies queued behind a kernel that
    // held the stream until all were queued (p2pBandwidthLatencyTest on an H200: 1.79 us).
    double h2d_latency_us = 2.5, d2h_latency_us = 1.6, d2d_latency_us = 1.8;
    double memset_page_us = 1.55, memset_latency_us = 2.8;
    // Host time of the calls themselves: a copy call that returns at once, a memset call (page-sized
    // or a kernel), a device-to-device copy call (cudaMemcpy or an asynchronous one: both return
    // before the copy is done; 3.1-5.4 us measured, 4.3 us for cudaMemcpyPeerAsync within one H200),
    // and, for a call that waits for its copy, the time from the copy's end until the host thread
    // runs again.
    double copy_call_us = 1.2, memset_call_us = 1.0, memset_launch_us = 2.9, d2d_memcpy_call_us = 3.8;
    double copy_return_us = 3.3;
    // A pageable host-to-device copy of up to 1 MiB returns once the host has copied it into the
    // driver's staging buffer: staging_us plus the bytes at staging_gbps.
    double staging_us = 1.8, staging_gbps = 20.2;
    double api_us = 0.5;                // host-side cost of a plain runtime call
    double sync_us = 1.0;               // host-side cost of a synchronising call
    double kernel_bytes_per_thread = 8.0;  // traffic per thread of a kernel without pointer arguments (read + write of a float)
    // Host time of cudaMalloc and cudaFree: a fixed part and a part that grows with the size (the
    // driver maps or unmaps every page). On one H200 the same repeated allocate-and-free took, as the
    // median of each process, 74-116 us at 16 MiB, 157-384 us at 256 MiB and 385-956 us at 1 GiB,
    // depending on the process (bench/results/h200-calibration.md); these sit in the middle of that
    // spread (93, 216 and 607 us).
    double malloc_us = 45.0, malloc_us_per_gib = 130.0;
    double free_us = 40.0, free_us_per_gib = 392.0;
    // Host time of page-locking: cudaMallocHost and cudaHostAlloc map and pin every page,
    // cudaHostRegister pins pages the program already has, and the releasing calls undo that. A
    // fixed part and a part per GiB, fitted to 4, 64 and 256 MiB between two H200 machines that
    // differed by 1.4-2.5x (bench/results/h200-host-costs.md; cuda-facts.md's 159 ms for 256 MiB came
    // from a third, slower one). Host time, so it depends on the host's CPU and memory.
    double pin_alloc_us = 0.0, pin_alloc_us_per_gib = 266000.0;
    double pin_free_us = 30.0, pin_free_us_per_gib = 79100.0;
    double register_us = 53.0, register_us_per_gib = 27300.0;
    double unregister_us = 29.0, unregister_us_per_gib = 13100.0;

    bool operator==(const CostModel&) const = default;
};

// A host link that several devices reach the host through, such as a PCIe switch's one uplink to
// its CPU socket. Host-to-device copies of its devices share one direction of it and device-to-host
// copies the other, so two devices copying from the host at once do not each get full speed.
// A device on no shared link has its own path to host memory.
struct SharedHostLink {
    std::string name;               // "switch 0", "socket 1": shown by `mgpu topo`
    std::vector<int> devices;       // device numbers on this machine
    double gbps = 0.0;              // each direction

    bool operator==(const SharedHostLink&) const = default;
};

struct MachineSpec {
    std::string name;                       // preset name, or the "name" given in a JSON file
    std::string description;                // one line for people (mgpu topo prints it)
    std::string source;                     // the JSON file it came from; empty for a preset
    bool has_driver = true;                 // false: no GPU / no driver (cudaGetDeviceCount gives 35)
    std::vector<DeviceSpec> devices;
    std::vector<std::vector<LinkSpec>> links;   // links[a][b], n x n; the diagonal is a default LinkSpec
    std::vector<SharedHostLink> shared_host_links;
    // After CUDA_VISIBLE_DEVICES: each device's number on the whole machine (empty: not narrowed).
    std::vector<int> physical_index;
    // Why the runtime cannot enumerate at all, when it cannot: a device CUDA_VISIBLE_DEVICES lists
    // twice, or an unknown CUDA_DEVICE_ORDER. Every call then answers 101 (cudaErrorInvalidDevice).
    std::string enumeration_problem;
    CostModel cost;
};

struct TopologyError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A preset name (h200, hgx-h200-8, pcie-4, islands-2x2, mixed-3, none) or a path to a JSON file.
// Throws TopologyError with a message that names the offending field.
MachineSpec load_machine(const std::string& name_or_path);

// The preset names, in the order `topo --list` prints them.
std::vector<std::string> preset_names();

// Applies CUDA_VISIBLE_DEVICES (nullptr = unset) as the real driver does: list order, stops at
// the first invalid entry, "" hides every device; a device listed twice sets enumeration_problem.
MachineSpec apply_visible_devices(const MachineSpec& machine, const char* cuda_visible_devices);

// Applies CUDA_DEVICE_ORDER (nullptr = unset): FASTEST_FIRST, the default, keeps the machine's own
// order (presets and files list their devices fastest first); PCI_BUS_ID sorts by PCI domain, bus
// and device, as nvidia-smi numbers them; any other value sets enumeration_problem.
MachineSpec apply_device_order(const MachineSpec& machine, const char* cuda_device_order);

// The machine as a machine file with every property written out (`mgpu topo --json`);
// loading that text gives an equal machine.
std::string machine_to_json(const MachineSpec& machine);

// What `mgpu topo` prints: the nvidia-smi topo -m style matrix and each device's key properties.
std::string describe_machine(const MachineSpec& machine);

const char* to_string(LinkType type);   // "none", "pcie", "nvlink"
const char* to_string(PciePath path);   // "PIX", "PXB", "PHB", "NODE", "SYS"

// The nvidia-smi topo -m cell for a link: "NV18", "PHB", "SYS"... ("-" for LinkType::None).
std::string link_label(const LinkSpec& link);

// "0000:9A:00.0", as cudaDeviceGetPCIBusId writes it.
std::string pci_bus_id(const DeviceSpec& device);

// Single-device profiles a JSON file can name with {"preset": ...}: h200, a100-sxm4-80gb, l4.
DeviceSpec device_preset(const std::string& name);   // throws TopologyError for an unknown name
std::vector<std::string> device_preset_names();

}  // namespace mgpu::sim
