// GPU uuids. Real ones are random per board; the simulator derives them from the machine
// name and the device's index so that a machine prints the same uuids on every run and
// CUDA_VISIBLE_DEVICES=GPU-... lines in course material keep working.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

std::uint64_t fnv1a(const std::string& text)
{
    std::uint64_t hash = 1469598103934665603ull;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

std::uint64_t splitmix(std::uint64_t& state)
{
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::string uuid_from_seed(const std::string& seed)
{
    std::uint64_t state = fnv1a(seed);
    const std::uint64_t high = splitmix(state), low = splitmix(state);
    char text[48];
    std::snprintf(text, sizeof text, "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                  static_cast<unsigned>((high >> 16) & 0xFFFF), static_cast<unsigned>(high & 0xFFFF),
                  static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFull));
    return text;
}

}  // namespace

bool is_well_formed_uuid(const std::string& uuid)
{
    // GPU- then 8-4-4-4-12 hexadecimal digits.
    static const std::string shape = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    if (uuid.size() != shape.size() || uuid.compare(0, 4, "GPU-") != 0) return false;
    for (std::size_t i = 4; i < shape.size(); ++i) {
        const bool want_digit = shape[i] == 'x';
        if (want_digit != static_cast<bool>(std::isxdigit(static_cast<unsigned char>(uuid[i])))) return false;
        if (!want_digit && uuid[i] != '-') return false;
    }
    return true;
}

void fill_missing_uuids(MachineSpec& machine)
{
    std::set<std::string> taken;
    for (const auto& device : machine.devices)
        if (!device.uuid.empty()) taken.insert(device.uuid);
    for (std::size_t i = 0; i < machine.devices.size(); ++i) {
        auto& device = machine.devices[i];
        if (!device.uuid.empty()) continue;
        std::string seed = machine.name + "/" + std::to_string(i);
        std::string uuid = uuid_from_seed(seed);
        while (taken.count(uuid)) uuid = uuid_from_seed(seed += "+");
        taken.insert(uuid);
        device.uuid = uuid;
    }
}

}  // namespace mgpu::sim::topology_detail
