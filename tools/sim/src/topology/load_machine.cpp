// load_machine: a preset name or a JSON file, and a helpful answer for anything else.
#include <filesystem>
#include <string>
#include <system_error>

#include "topology/topology_detail.h"

namespace mgpu::sim {

MachineSpec load_machine(const std::string& name_or_path)
{
    using namespace topology_detail;
    if (auto preset = preset_machine(name_or_path)) return *preset;

    std::error_code error;
    if (std::filesystem::exists(name_or_path, error)) return load_machine_file(name_or_path);

    // Something that looks like a path is a missing file; anything else a mistyped preset.
    const bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                                 (name_or_path.size() > 5 && name_or_path.ends_with(".json"));
    if (looks_like_path) return load_machine_file(name_or_path);

    std::string message = "unknown topology \"" + name_or_path + "\": it is neither a preset nor a file";
    if (auto near = closest_match(name_or_path, preset_names())) message += " (did you mean \"" + *near + "\"?)";
    message += ". The presets are " + join_names(preset_names()) + "; or give the path of a JSON machine file.";
    throw TopologyError(message);
}

}  // namespace mgpu::sim
