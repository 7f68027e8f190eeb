#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "command.h"
#include "exit_codes.h"
#include "machine_table.h"
#include "mgpu/sim/machine.h"
#include "topology_choice.h"
#include "translate.h"

namespace mgpu::cli {

namespace {

const char* link_name(sim::LinkType type) {
    switch (type) {
        case sim::LinkType::NVLink: return "NVLink";
        case sim::LinkType::PCIe: return "PCIe";
        case sim::LinkType::None: return "none";
    }
    return "?";
}

// One line per preset for --list: "8 x NVIDIA H200; NVLink between every pair, all can peer".
std::string machine_summary(const sim::MachineSpec& machine) {
    if (!machine.has_driver) return tr("no GPU and no driver");
    if (machine.devices.empty()) return tr("no GPU");
    std::map<std::string, int> models;
    for (const auto& device : machine.devices) ++models[device.name];
    std::ostringstream out;
    bool first = true;
    for (const auto& [name, count] : models) {
        out << (first ? "" : " + ") << count << " x " << name;
        first = false;
    }
    std::size_t devices = machine.devices.size();
    if (devices < 2) return out.str();
    std::size_t pairs = 0, peer_pairs = 0;
    std::set<std::string> link_types;
    for (std::size_t a = 0; a < devices; ++a)
        for (std::size_t b = 0; b < devices; ++b) {
            if (a == b) continue;
            ++pairs;
            const sim::LinkSpec& link = machine.links[a][b];
            if (link.can_peer) ++peer_pairs;
            link_types.insert(link_name(link.type));
        }
    std::string links;
    for (const auto& type : link_types) links += (links.empty() ? "" : ", ") + type;
    out << "; " << fill(tr("links: {}"), links);
    out << "; " << fill(tr("{0} of {1} directions can peer"), peer_pairs, pairs);
    return out.str();
}

int list_presets() {
    std::size_t width = 0;
    for (const auto& name : sim::preset_names()) width = std::max(width, name.size());
    for (const auto& name : sim::preset_names()) {
        std::cout << "  " << name << std::string(width - name.size() + 2, ' ')
                  << machine_summary(sim::load_machine(name)) << "\n";
    }
    std::cout << tr("Pick one with --topology NAME (or MGPU_TOPOLOGY=NAME), or describe your own machine in a JSON file.")
              << "\n";
    return kExitOk;
}

int topo(const Kit&, const ParsedArgs& args) {
    if (args.has("--list")) return list_presets();
    const std::string chosen = checked_topology(args.value("--topology").value_or(topology_from_environment()));
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    sim::MachineSpec machine;
    try {
        machine = sim::apply_visible_devices(sim::load_machine(chosen), visible);
    } catch (const sim::TopologyError& problem) {
        throw SetupError(problem.what());
    }
    std::cout << machine_table(machine);
    if (visible != nullptr) {
        std::size_t all = sim::load_machine(chosen).devices.size();
        std::cout << "\nCUDA_VISIBLE_DEVICES=" << visible << ": "
                  << fill(tr(all == 1 ? N_("programs see {0} of the {1} device, numbered from 0 in the order listed.")
                                      : N_("programs see {0} of the {1} devices, numbered from 0 in the order listed.")),
                          machine.devices.size(), all)
                  << "\n";
    }
    return kExitOk;
}

}  // namespace

const Command topo_command = {
    N_("Working on an exercise"),
    {
        .name = "topo",
        .usage = "topo [--topology NAME|FILE] [--list]",
        .summary = N_("Shows the simulated machine: its GPUs, the links between them, which pairs can peer."),
        .description = N_("Without --topology it shows MGPU_TOPOLOGY's machine, or the default (h200).\n"
                       "CUDA_VISIBLE_DEVICES narrows and reorders the devices as the real driver does."),
        .options =
            {
                {"--topology", "NAME|FILE", N_("a preset name or a JSON topology file")},
                {"--list", "", N_("list the preset machines")},
            },
        .examples = "  tools/mgpu topo --topology hgx-h200-8\n"
                    "  CUDA_VISIBLE_DEVICES=2,0 tools/mgpu topo --topology pcie-4\n",
    },
    topo,
};

}  // namespace mgpu::cli
