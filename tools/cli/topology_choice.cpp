#include "topology_choice.h"

#include <cstdlib>
#include <filesystem>

#include "exit_codes.h"
#include "mgpu/sim/machine.h"

namespace mgpu::cli {

std::string topology_from_environment() {
    const char* chosen = std::getenv("MGPU_TOPOLOGY");
    return (chosen != nullptr && *chosen != '\0') ? chosen : kDefaultTopology;
}

std::string checked_topology(const std::string& name_or_path) {
    std::error_code error;
    std::string chosen = name_or_path;
    if (std::filesystem::is_regular_file(name_or_path, error))
        chosen = std::filesystem::absolute(name_or_path).lexically_normal().string();
    try {
        sim::load_machine(chosen);
    } catch (const sim::TopologyError& problem) {
        throw SetupError(problem.what());
    }
    return chosen;
}

}  // namespace mgpu::cli
