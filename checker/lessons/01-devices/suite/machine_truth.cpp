#include "machine_truth.h"

#include <cctype>
#include <tuple>

#include "mgpu/sim/control.h"

namespace lesson1 {

std::vector<DeviceInfo> expected_devices() {
    std::vector<DeviceInfo> devices;
    const auto& machine = mgpu::sim::machine();
    for (std::size_t i = 0; i < machine.devices.size(); ++i) {
        const mgpu::sim::DeviceSpec& spec = machine.devices[i];
        DeviceInfo info;
        info.ordinal = static_cast<int>(i);
        info.name = spec.name;
        info.major = spec.major;
        info.minor = spec.minor;
        info.multiprocessors = spec.sm_count;
        info.total_memory = spec.total_mem;
        info.pci_bus_id = mgpu::sim::pci_bus_id(spec);
        info.uuid = spec.uuid;
        for (char& c : info.uuid) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        info.uuid.replace(0, 4, "GPU-");
        devices.push_back(info);
    }
    return devices;
}

std::string nvidia_smi_spelling(const std::string& cuda_bus_id) {
    std::string text = "0000" + cuda_bus_id;
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

int expected_pick(const Requirements& needs) {
    const auto& machine = mgpu::sim::machine();
    int best = -1;
    std::tuple<std::size_t, int, int, int, int> best_key{};
    for (std::size_t i = 0; i < machine.devices.size(); ++i) {
        const mgpu::sim::DeviceSpec& d = machine.devices[i];
        const bool capable = d.major > needs.min_major || (d.major == needs.min_major && d.minor >= needs.min_minor);
        if (!capable || d.total_mem < needs.min_memory) continue;
        const std::tuple<std::size_t, int, int, int, int> key{d.total_mem, d.sm_count, -d.pci_domain, -d.pci_bus,
                                                              -d.pci_device};
        if (best < 0 || key > best_key) {
            best = static_cast<int>(i);
            best_key = key;
        }
    }
    return best;
}

std::string describe(const Requirements& needs) {
    std::string text = "compute capability >= " + std::to_string(needs.min_major) + "." + std::to_string(needs.min_minor);
    text += ", at least " + std::to_string(needs.min_memory >> 30) + " GiB";
    return text;
}

std::string differing_fields(const DeviceInfo& expected, const DeviceInfo& observed) {
    std::string fields;
    const auto note = [&](bool differs, const char* name) {
        if (differs) fields += (fields.empty() ? "" : ", ") + std::string(name);
    };
    note(expected.ordinal != observed.ordinal, "ordinal");
    note(expected.name != observed.name, "name");
    note(expected.major != observed.major || expected.minor != observed.minor, "compute capability");
    note(expected.multiprocessors != observed.multiprocessors, "multiprocessors");
    note(expected.total_memory != observed.total_memory, "total_memory");
    note(expected.pci_bus_id != observed.pci_bus_id, "pci_bus_id");
    note(expected.uuid != observed.uuid, "uuid");
    return fields;
}

}  // namespace lesson1
