// Pieces shared by the topology module's files; not part of the public interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mgpu/sim/machine.h"

namespace mgpu::sim::topology_detail {

// NVLink 4 as measured on an HGX H100 board (cuda-facts.md, Speeds): 371-377 GB/s one way
// over the 18 links of a GPU, so about 20.8 GB/s per link.
inline constexpr int kNvlinksPerH200 = 18;
inline constexpr double kNvlink4FullGbps = 375.0;
inline constexpr double kNvlink4PerLinkGbps = kNvlink4FullGbps / kNvlinksPerH200;

// What the driver keeps for itself on a fresh context: totalGlobalMem minus cudaMemGetInfo's
// free on the measured H200 (cuda-facts.md).
inline constexpr std::size_t kDriverReservedBytes = 150109880320ull - 149557477376ull;

LinkSpec nvlink_link(int nvlinks, double gbps);
LinkSpec pcie_link(PciePath path, bool can_peer, double gbps);

// An n x n link matrix where every pair is joined by `link` (the diagonal stays default).
std::vector<std::vector<LinkSpec>> uniform_links(std::size_t n, const LinkSpec& link);

// The built-in machine, or nothing when `name` is no preset.
std::optional<MachineSpec> preset_machine(const std::string& name);

// Reads and checks a JSON machine file (format in FORMAT.md).
MachineSpec load_machine_file(const std::string& path);

// Gives every device without a uuid a stable one derived from the machine name and its index.
void fill_missing_uuids(MachineSpec& machine);
bool is_well_formed_uuid(const std::string& uuid);

// The candidate closest to `word` if it is plausibly a misspelling of it, else nothing.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "a, b and c" (or "a, b or c" with last = " or ")
std::string join_names(const std::vector<std::string>& names, const char* last = " and ");

}  // namespace mgpu::sim::topology_detail
