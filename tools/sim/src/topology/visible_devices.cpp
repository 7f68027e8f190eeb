// CUDA_VISIBLE_DEVICES as the driver reads it (cuda-facts.md): unset shows every device, ""
// shows none, and a list enumerates in list order up to its first invalid entry.
#include <algorithm>
#include <cctype>
#include <tuple>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/topology_detail.h"

namespace mgpu::sim {
namespace {

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// An entry is a device index or a uuid ("GPU-" and enough leading digits to name one device).
std::optional<std::size_t> device_for_entry(const MachineSpec& machine, std::string_view entry)
{
    if (entry.empty()) return std::nullopt;
    if (entry.substr(0, 4) == "GPU-") {
        std::optional<std::size_t> found;
        for (std::size_t i = 0; i < machine.devices.size(); ++i) {
            const std::string& uuid = machine.devices[i].uuid;
            if (entry.size() > 4 && uuid.size() >= entry.size() && std::string_view(uuid).substr(0, entry.size()) == entry) {
                if (found) return std::nullopt;   // the prefix names more than one device
                found = i;
            }
        }
        return found;
    }
    std::size_t index = 0;
    for (char c : entry) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
        index = index * 10 + static_cast<std::size_t>(c - '0');
        if (index > machine.devices.size()) return std::nullopt;
    }
    if (index >= machine.devices.size()) return std::nullopt;
    return index;
}

}  // namespace

namespace {

// The shared host links of `machine` seen through a choice of its devices: `chosen[i]` is the
// machine's device that becomes device i. A link keeps the chosen devices on it, renumbered, while
// at least two of them are left to share it.
std::vector<SharedHostLink> shared_links_of(const MachineSpec& machine, const std::vector<std::size_t>& chosen)
{
    std::vector<SharedHostLink> kept;
    for (const SharedHostLink& link : machine.shared_host_links) {
        SharedHostLink narrowed{link.name, {}, link.gbps};
        for (std::size_t i = 0; i < chosen.size(); ++i)
            for (int device : link.devices)
                if (device >= 0 && static_cast<std::size_t>(device) == chosen[i]) narrowed.devices.push_back(static_cast<int>(i));
        if (narrowed.devices.size() >= 2) kept.push_back(std::move(narrowed));
    }
    return kept;
}

}  // namespace

MachineSpec apply_visible_devices(const MachineSpec& machine, const char* cuda_visible_devices)
{
    if (cuda_visible_devices == nullptr || !machine.has_driver) return machine;

    std::vector<std::size_t> chosen;
    std::string_view rest = cuda_visible_devices;
    while (true) {
        const std::size_t comma = rest.find(',');
        const auto device = device_for_entry(machine, trimmed(rest.substr(0, comma)));
        if (!device) break;
        // A device listed twice is not skipped: the driver refuses the whole list (measured: "0,0" gives 101).
        for (std::size_t taken : chosen) {
            if (taken == *device) {
                MachineSpec refused = machine;
                refused.enumeration_problem = "CUDA_VISIBLE_DEVICES lists device " + machine.devices[taken].uuid + " twice";
                refused.devices.clear();   // nothing can be used, so nothing is shown
                refused.links.clear();
                refused.physical_index.clear();
                refused.shared_host_links.clear();
                return refused;
            }
        }
        chosen.push_back(*device);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }

    MachineSpec visible = machine;
    visible.devices.clear();
    visible.physical_index.clear();
    visible.links.assign(chosen.size(), std::vector<LinkSpec>(chosen.size()));
    for (std::size_t a = 0; a < chosen.size(); ++a) {
        visible.devices.push_back(machine.devices[chosen[a]]);
        const bool narrowed_before = chosen[a] < machine.physical_index.size();
        visible.physical_index.push_back(narrowed_before ? machine.physical_index[chosen[a]] : static_cast<int>(chosen[a]));
        for (std::size_t b = 0; b < chosen.size(); ++b)
            if (a != b && chosen[a] < machine.links.size() && chosen[b] < machine.links[chosen[a]].size())
                visible.links[a][b] = machine.links[chosen[a]][chosen[b]];
    }
    visible.shared_host_links = shared_links_of(machine, chosen);
    return visible;
}

MachineSpec apply_device_order(const MachineSpec& machine, const char* cuda_device_order)
{
    if (cuda_device_order == nullptr || !machine.has_driver) return machine;
    const std::string order = cuda_device_order;
    if (order == "FASTEST_FIRST") return machine;
    if (order != "PCI_BUS_ID") {
        MachineSpec refused = machine;
        refused.enumeration_problem = "CUDA_DEVICE_ORDER=" + order + " is neither FASTEST_FIRST nor PCI_BUS_ID";
        refused.devices.clear();   // nothing can be used, so nothing is shown
        refused.links.clear();
        refused.physical_index.clear();
        refused.shared_host_links.clear();
        return refused;
    }
    std::vector<std::size_t> by_bus(machine.devices.size());
    for (std::size_t i = 0; i < by_bus.size(); ++i) by_bus[i] = i;
    const auto address = [&](std::size_t i) {
        const DeviceSpec& d = machine.devices[i];
        return std::tuple{d.pci_domain, d.pci_bus, d.pci_device};
    };
    std::stable_sort(by_bus.begin(), by_bus.end(), [&](std::size_t a, std::size_t b) { return address(a) < address(b); });
    MachineSpec sorted = machine;
    sorted.devices.clear();
    sorted.physical_index.clear();
    sorted.links.assign(by_bus.size(), std::vector<LinkSpec>(by_bus.size()));
    for (std::size_t a = 0; a < by_bus.size(); ++a) {
        sorted.devices.push_back(machine.devices[by_bus[a]]);
        const bool narrowed_before = by_bus[a] < machine.physical_index.size();
        sorted.physical_index.push_back(narrowed_before ? machine.physical_index[by_bus[a]] : static_cast<int>(by_bus[a]));
        for (std::size_t b = 0; b < by_bus.size(); ++b)
            if (by_bus[a] < machine.links.size() && by_bus[b] < machine.links[by_bus[a]].size())
                sorted.links[a][b] = machine.links[by_bus[a]][by_bus[b]];
    }
    sorted.shared_host_links = shared_links_of(machine, by_bus);
    return sorted;
}

}  // namespace mgpu::sim
