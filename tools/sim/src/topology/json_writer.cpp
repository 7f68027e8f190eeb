// A machine written out as a machine file (FORMAT.md) with every value explicit, so that a
// preset can be saved, edited and loaded again.
#include <string>

#include <nlohmann/json.hpp>

#include "mgpu/sim/machine.h"

namespace mgpu::sim {
namespace {

using Ordered = nlohmann::ordered_json;

Ordered device_json(const DeviceSpec& d)
{
    Ordered j;
    j["name"] = d.name;
    j["uuid"] = d.uuid;
    j["total_mem"] = d.total_mem;
    j["free_mem"] = d.free_mem;
    j["major"] = d.major;
    j["minor"] = d.minor;
    j["sm_count"] = d.sm_count;
    j["clock_khz"] = d.clock_khz;
    j["memory_clock_khz"] = d.memory_clock_khz;
    j["memory_bus_width"] = d.memory_bus_width;
    j["l2_cache_size"] = d.l2_cache_size;
    j["shared_mem_per_block"] = d.shared_mem_per_block;
    j["shared_mem_per_block_optin"] = d.shared_mem_per_block_optin;
    j["shared_mem_per_sm"] = d.shared_mem_per_sm;
    j["regs_per_block"] = d.regs_per_block;
    j["max_threads_per_block"] = d.max_threads_per_block;
    j["max_threads_per_sm"] = d.max_threads_per_sm;
    j["max_threads_dim"] = {d.max_threads_dim[0], d.max_threads_dim[1], d.max_threads_dim[2]};
    j["max_grid_size"] = {d.max_grid_size[0], d.max_grid_size[1], d.max_grid_size[2]};
    j["async_engine_count"] = d.async_engine_count;
    j["pci_domain"] = d.pci_domain;
    j["pci_bus"] = d.pci_bus;
    j["pci_device"] = d.pci_device;
    j["memory_bandwidth_gbps"] = d.memory_bandwidth_gbps;
    j["d2d_copy_gbps"] = d.d2d_copy_gbps;
    return j;
}

Ordered link_json(std::size_t from, std::size_t to, const LinkSpec& link, bool both_ways)
{
    Ordered j;
    j["from"] = from;
    j["to"] = to;
    j["type"] = to_string(link.type);
    if (link.type == LinkType::NVLink) j["nvlinks"] = link.nvlinks;
    if (link.type == LinkType::PCIe) j["pcie_path"] = to_string(link.pcie_path);
    j["can_peer"] = link.can_peer;
    if (link.type != LinkType::None) j["gbps"] = link.gbps;
    j["perf_rank"] = link.perf_rank;
    j["native_atomics"] = link.native_atomics;
    if (!both_ways) j["both_ways"] = false;
    return j;
}

Ordered cost_json(const CostModel& c)
{
    Ordered j;
    j["h2d_pinned_gbps"] = c.h2d_pinned_gbps;
    j["h2d_pageable_gbps"] = c.h2d_pageable_gbps;
    j["d2h_pinned_gbps"] = c.d2h_pinned_gbps;
    j["d2h_pageable_gbps"] = c.d2h_pageable_gbps;
    j["staged_peer_gbps"] = c.staged_peer_gbps;
    j["staged_peer_latency_us"] = c.staged_peer_latency_us;
    j["launch_us"] = c.launch_us;
    j["kernel_min_us"] = c.kernel_min_us;
    j["copy_latency_us"] = c.copy_latency_us;
    j["api_us"] = c.api_us;
    j["sync_us"] = c.sync_us;
    j["kernel_bytes_per_thread"] = c.kernel_bytes_per_thread;
    j["malloc_us"] = c.malloc_us;
    j["malloc_us_per_gib"] = c.malloc_us_per_gib;
    j["free_us"] = c.free_us;
    j["free_us_per_gib"] = c.free_us_per_gib;
    j["h2d_latency_us"] = c.h2d_latency_us;
    j["d2h_latency_us"] = c.d2h_latency_us;
    j["d2d_latency_us"] = c.d2d_latency_us;
    j["memset_page_us"] = c.memset_page_us;
    j["memset_latency_us"] = c.memset_latency_us;
    j["copy_call_us"] = c.copy_call_us;
    j["memset_call_us"] = c.memset_call_us;
    j["memset_launch_us"] = c.memset_launch_us;
    j["d2d_memcpy_call_us"] = c.d2d_memcpy_call_us;
    j["copy_return_us"] = c.copy_return_us;
    j["staging_us"] = c.staging_us;
    j["staging_gbps"] = c.staging_gbps;
    j["pin_alloc_us"] = c.pin_alloc_us;
    j["pin_alloc_us_per_gib"] = c.pin_alloc_us_per_gib;
    j["pin_free_us"] = c.pin_free_us;
    j["pin_free_us_per_gib"] = c.pin_free_us_per_gib;
    j["register_us"] = c.register_us;
    j["register_us_per_gib"] = c.register_us_per_gib;
    j["unregister_us"] = c.unregister_us;
    j["unregister_us_per_gib"] = c.unregister_us_per_gib;
    return j;
}

}  // namespace

std::string machine_to_json(const MachineSpec& machine)
{
    Ordered j;
    j["name"] = machine.name;
    if (!machine.description.empty()) j["description"] = machine.description;
    if (!machine.has_driver) {
        j["has_driver"] = false;
    } else {
        j["devices"] = Ordered::array();
        for (const auto& device : machine.devices) j["devices"].push_back(device_json(device));
        j["links"] = Ordered::array();
        const std::size_t n = machine.devices.size();
        auto link = [&](std::size_t a, std::size_t b) {
            return a < machine.links.size() && b < machine.links[a].size() ? machine.links[a][b] : LinkSpec{};
        };
        // A pair that is the same both ways is written once.
        for (std::size_t a = 0; a < n; ++a)
            for (std::size_t b = 0; b < n; ++b) {
                if (a == b) continue;
                const bool symmetric = link(a, b) == link(b, a);
                if (symmetric && a > b) continue;
                j["links"].push_back(link_json(a, b, link(a, b), symmetric));
            }
        j["shared_host_links"] = Ordered::array();
        for (const auto& shared : machine.shared_host_links) {
            Ordered entry;
            entry["name"] = shared.name;
            entry["devices"] = shared.devices;
            entry["gbps"] = shared.gbps;
            j["shared_host_links"].push_back(entry);
        }
    }
    j["cost"] = cost_json(machine.cost);
    return j.dump(2) + "\n";
}

}  // namespace mgpu::sim
