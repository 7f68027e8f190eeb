// The simulated machine a command should use: --topology, else MGPU_TOPOLOGY, else the
// simulator's default; checked up front so a typo is reported before anything is built.
#pragma once

#include <string>

namespace mgpu::cli {

// The simulator's own default machine.
inline constexpr const char* kDefaultTopology = "h200";

// The topology named by the environment (MGPU_TOPOLOGY), or the default.
std::string topology_from_environment();

// Loads the preset or JSON file once to check it; returns the name to hand to the simulator
// (a file as an absolute path, so it still resolves from another folder). Throws SetupError
// with the simulator's explanation when it is not a valid machine.
std::string checked_topology(const std::string& name_or_path);

}  // namespace mgpu::cli
