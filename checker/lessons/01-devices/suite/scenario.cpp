#include "scenario.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include "mgpu/check/harness.h"
#include "mgpu/sim/control.h"

namespace lesson1 {

namespace {

void set_or_unset(const char* variable, const std::optional<std::string>& value) {
    if (value) ::setenv(variable, value->c_str(), 1);
    else ::unsetenv(variable);
}

}  // namespace

bool start(const Machine& machine, const std::string& inputs) {
    if (mgpu::check::skip_unless_topology(machine.topology)) return false;
    set_or_unset("CUDA_VISIBLE_DEVICES", machine.visible_devices);
    set_or_unset("CUDA_DEVICE_ORDER", machine.device_order);
    mgpu::sim::Options options;
    options.topology = machine.topology;
    options.apply_cuda_visible_devices = true;
    options.faults = machine.faults;
    try {
        mgpu::sim::reset_machine(options);
    } catch (const mgpu::sim::EnvironmentFixedAtStart& unavailable) {
        // Real GPUs: the case starts again in a process that begins with these variables.
        mgpu::check::skip(std::string(unavailable.what()) + "; " + mgpu::check::restart_case_with_environment());
        return false;
    } catch (const mgpu::sim::ScenarioUnavailable& unavailable) {
        mgpu::check::skip(unavailable.what());
        return false;
    }
    // A machine file is named by the machine's own name, not by its path.
    std::string description = mgpu::sim::machine().name;
    if (machine.visible_devices) description += ", CUDA_VISIBLE_DEVICES=\"" + *machine.visible_devices + "\"";
    if (machine.device_order) description += ", CUDA_DEVICE_ORDER=" + *machine.device_order;
    if (!inputs.empty()) description += ", " + inputs;
    mgpu::check::set_scenario(description);
    return true;
}

std::string two_domain_machine() {
    // totalGlobalMem as an H100 80GB reports it, the same on both boards by construction.
    static const char* const json = R"({
  "name": "h100-two-domains",
  "description": "an H100 PCIe (114 SMs) at 0000:1B:00.0 and an H100 SXM (132 SMs) at 0001:1B:00.0, 80 GB each",
  "devices": [
    { "name": "NVIDIA H100 PCIe", "total_mem": 85029158912, "sm_count": 114, "major": 9, "minor": 0,
      "pci_domain": 0, "pci_bus": 27, "pci_device": 0 },
    { "name": "NVIDIA H100 80GB HBM3", "total_mem": 85029158912, "sm_count": 132, "major": 9, "minor": 0,
      "pci_domain": 1, "pci_bus": 27, "pci_device": 0 }
  ]
})";
    // Each case runs in a process of its own with a private /tmp.
    const std::string path = "/tmp/lesson1-h100-two-domains.json";
    std::ofstream(path) << json;
    return path;
}

std::mt19937_64 random_for(const std::string& salt) {
    std::uint64_t mixed = mgpu::check::run_seed();
    for (char c : salt) mixed = (mixed ^ static_cast<unsigned char>(c)) * 1099511628211ull;   // FNV-1a step
    return std::mt19937_64(mixed);
}

std::string random_visible_list(std::mt19937_64& random, int devices, int count) {
    std::vector<int> order(static_cast<std::size_t>(devices));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::string list;
    for (int i = 0; i < count && i < devices; ++i) list += (i ? "," : "") + std::to_string(order[static_cast<std::size_t>(i)]);
    return list;
}

int device_count() { return static_cast<int>(mgpu::sim::machine().devices.size()); }

std::string device_name(int ordinal) {
    const auto& machine = mgpu::sim::machine();
    std::string text = "device " + std::to_string(ordinal);
    if (ordinal >= 0 && static_cast<std::size_t>(ordinal) < machine.physical_index.size() &&
        machine.physical_index[static_cast<std::size_t>(ordinal)] != ordinal)
        text += " (the machine's device " + std::to_string(machine.physical_index[static_cast<std::size_t>(ordinal)]) + ")";
    return text;
}

}  // namespace lesson1
