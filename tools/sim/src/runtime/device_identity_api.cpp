// Naming and choosing devices: PCI bus ids both ways, cudaChooseDevice and cudaInitDevice.
// None of the lookups creates a context (they read the machine's description, as the driver
// reads its device table); cudaInitDevice creates one without making the device current.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api_call.h"
#include "cuda_runtime_api.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {

struct PciAddress {
    unsigned long domain = 0, bus = 0, device = 0, function = 0;
};

// One hexadecimal field of a bus id: at least one digit, at most `max_digits`.
std::optional<unsigned long> hex_field(std::string_view text, std::size_t max_digits) {
    if (text.empty() || text.size() > max_digits) return std::nullopt;
    unsigned long value = 0;
    for (char c : text) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
        value = value * 16 + static_cast<unsigned long>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                                                               : std::tolower(c) - 'a' + 10);
    }
    return value;
}

// The forms the runtime documents: domain:bus:device.function, domain:bus:device and
// bus:device.function, all hexadecimal. The domain may have 4 digits (CUDA's form) or 8
// (nvidia-smi's), so both spellings of one address name the same device.
std::optional<PciAddress> parse_pci_bus_id(std::string_view text) {
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
        const std::size_t colon = text.find(':', start);
        parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
        if (colon == std::string_view::npos) break;
        start = colon + 1;
    }
    if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
    std::string_view last = parts.back();
    std::optional<unsigned long> function = 0;
    const std::size_t dot = last.find('.');
    if (dot != std::string_view::npos) {
        function = hex_field(last.substr(dot + 1), 1);
        last = last.substr(0, dot);
    } else if (parts.size() == 2) {
        return std::nullopt;   // bus:device needs its .function
    }
    PciAddress address;
    const auto device = hex_field(last, 2);
    const auto bus = hex_field(parts[parts.size() - 2], 2);
    const auto domain = parts.size() == 3 ? hex_field(parts[0], 8) : std::optional<unsigned long>(0);
    if (!device || !bus || !domain || !function) return std::nullopt;
    address.domain = *domain;
    address.bus = *bus;
    address.device = *device;
    address.function = *function;
    return address;
}

// Lexicographic on (major, minor): 10.0 is newer than 9.9.
bool at_least(int major, int minor, int want_major, int want_minor) {
    return major > want_major || (major == want_major && minor >= want_minor);
}

}  // namespace

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device, Site site) {
    ApiCall call("cudaDeviceGetPCIBusId", site);
    call.arg("len", len).arg("device", device);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (!valid_device(device)) return call.done(cudaErrorInvalidDevice);
    if (pciBusId == nullptr || len <= 0) return call.done(cudaErrorInvalidValue);
    const std::string text = mgpu::sim::pci_bus_id(runtime().machine.devices[device]);
    // Measured on the H200: a buffer of 8 gets "0000:00" (the start of the id, terminated) and the call
    // returns 1, so a short buffer is both truncated and reported.
    std::snprintf(pciBusId, static_cast<std::size_t>(len), "%s", text.c_str());
    call.set_output(text);
    return call.done(static_cast<std::size_t>(len) > text.size() ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId, Site site) {
    ApiCall call("cudaDeviceGetByPCIBusId", site);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (device == nullptr || pciBusId == nullptr) return call.done(cudaErrorInvalidValue);
    call.set_text(std::string("cudaDeviceGetByPCIBusId(pciBusId=\"") + pciBusId + "\")");
    const auto address = parse_pci_bus_id(pciBusId);
    if (!address) return call.done(cudaErrorInvalidValue);   // measured: a malformed id gives 1
    const auto& devices = runtime().machine.devices;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto& d = devices[i];
        if (address->function == 0 && address->domain == static_cast<unsigned long>(d.pci_domain) &&
            address->bus == static_cast<unsigned long>(d.pci_bus) &&
            address->device == static_cast<unsigned long>(d.pci_device)) {
            *device = static_cast<int>(i);
            call.set_output(std::to_string(i));
            return call.done(cudaSuccess);
        }
    }
    return call.done(cudaErrorInvalidDevice);   // well formed, but no visible device sits there
}

cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop, Site site) {
    ApiCall call("cudaChooseDevice", site);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (device == nullptr || prop == nullptr) return call.done(cudaErrorInvalidValue);
    // The runtime documents no rule. Measured on one H200: device 0 and success even for compute
    // capability 99.0 (checked again 2026-12-02). The simulator gives the first device that meets the requested compute
    // capability and memory, and device 0 when none does: never an error, so the answer proves nothing.
    int chosen = 0;
    const auto& devices = runtime().machine.devices;
    for (std::size_t i = 0; i < devices.size(); ++i) {
        if (at_least(devices[i].major, devices[i].minor, prop->major, prop->minor) &&
            devices[i].total_mem >= prop->totalGlobalMem) {
            chosen = static_cast<int>(i);
            break;
        }
    }
    *device = chosen;
    call.set_output(std::to_string(chosen));
    return call.done(cudaSuccess);
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags, Site site) {
    ApiCall call("cudaInitDevice", site);
    call.arg("device", device).arg("deviceFlags", deviceFlags).arg("flags", flags);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (!valid_device(device)) return call.done(cudaErrorInvalidDevice);
    if ((flags & ~static_cast<unsigned>(cudaInitDeviceFlagsAreValid)) != 0) return call.done(cudaErrorInvalidValue);
    if ((flags & cudaInitDeviceFlagsAreValid) != 0 && (deviceFlags & ~static_cast<unsigned>(cudaDeviceMask)) != 0)
        return call.done(cudaErrorInvalidValue);
    if (device == runtime().options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    ensure_context(device);   // the context exists afterwards; the current device does not change
    if ((flags & cudaInitDeviceFlagsAreValid) != 0) runtime().devices[device].flags = deviceFlags;
    return call.done(cudaSuccess);
}
