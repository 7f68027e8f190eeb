// CUDA_VISIBLE_DEVICES as the driver reads it (cuda-facts.md): unset shows every device, ""
// shows none, and a list enumerates in list order up to its first invalid entry.
#include <cctype>
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

MachineSpec apply_visible_devices(const MachineSpec& machine, const char* cuda_visible_devices)
{
    if (cuda_visible_devices == nullptr || !machine.has_driver) return machine;

    std::vector<std::size_t> chosen;
    std::string_view rest = cuda_visible_devices;
    while (true) {
        const std::size_t comma = rest.find(',');
        const auto device = device_for_entry(machine, trimmed(rest.substr(0, comma)));
        // A device listed twice cannot be shown twice; like any invalid entry it ends the list.
        bool repeated = false;
        for (std::size_t taken : chosen) repeated = repeated || (device && taken == *device);
        if (!device || repeated) break;
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
    return visible;
}

}  // namespace mgpu::sim
