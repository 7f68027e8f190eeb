#include "support/scenario.h"

#include <cstdlib>

#include <cuda_runtime.h>

#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"

namespace suite {

bool start(const Machine& machine, const std::string& inputs) {
    if (mgpu::check::skip_unless_topology(machine.topology)) return false;
    if (machine.visible_devices.empty()) {
        ::unsetenv("CUDA_VISIBLE_DEVICES");
    } else {
        ::setenv("CUDA_VISIBLE_DEVICES", machine.visible_devices.c_str(), 1);
    }
    mgpu::sim::Options options;
    options.topology = machine.topology;
    options.schedule = mgpu::sim::parse_schedule(machine.schedule);
    options.apply_cuda_visible_devices = true;
    try {
        mgpu::sim::reset_machine(options);
    } catch (const mgpu::sim::EnvironmentFixedAtStart& unavailable) {
        // Real GPUs: the case starts again in a process that begins with CUDA_VISIBLE_DEVICES set.
        mgpu::check::skip(std::string(unavailable.what()) + "; " + mgpu::check::restart_case_with_environment());
        return false;
    } catch (const mgpu::sim::ScenarioUnavailable& unavailable) {
        mgpu::check::skip(unavailable.what());
        return false;
    }
    std::string description = machine.topology + ", " + machine.schedule;
    if (!machine.visible_devices.empty()) description += ", CUDA_VISIBLE_DEVICES=" + machine.visible_devices;
    if (!inputs.empty()) description += ", " + inputs;
    mgpu::check::set_scenario(description);
    return true;
}

int device_count() { return static_cast<int>(mgpu::sim::machine().devices.size()); }

bool machine_can_peer(int from, int to) {
    const auto& links = mgpu::sim::machine().links;
    if (from == to || from < 0 || to < 0 || from >= device_count() || to >= device_count()) return false;
    return links[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)].can_peer;
}

}  // namespace suite
