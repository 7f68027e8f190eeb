// Style: the lesson's own snippets (usable_devices, describe, print_names, roomiest_ampere_or_newer, zero_one_buffer_per_device) pasted and adapted.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

std::string uuid_text(const cudaUUID_t& uuid)
{
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        char pair[3];
        std::snprintf(pair, sizeof pair, "%02x", static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
        text += pair;
    }
    return text;
}

std::string lowercase(std::string text)
{
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0;
    bool operator==(const PciAddress&) const = default;
};

std::optional<PciAddress> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return PciAddress{domain, bus, device};
}

std::optional<PciAddress> pci_address_of(int device)
{
    int domain = 0, bus = 0, slot = 0;
    if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    return PciAddress{static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

bool capability_at_least(int major, int minor, int want_major, int want_minor)
{
    return major > want_major || (major == want_major && minor >= want_minor);
}

// describe() from section 1.3, filling a record instead of printing.
bool describe(int device, DeviceInfo& info)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    info.ordinal = device;
    info.name = prop.name;
    info.major = prop.major;
    info.minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    info.total_memory = prop.totalGlobalMem;
    info.uuid = uuid_text(prop.uuid);
    return true;
}

// print_names() from section 1.5, returning the bus id instead of printing.
bool bus_id_of(int device, std::string& out)
{
    char bus_id[32];   // CUDA needs 13 characters, including the terminating zero
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    out = bus_id;
    return true;
}

}  // namespace

// usable_devices() from section 1.2.
int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;   // 100, 35 or 101: nothing to use
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int device = 0; device < count; ++device) {
        DeviceInfo info;
        if (!describe(device, info) || !bus_id_of(device, info.pci_bus_id)) continue;
        devices.push_back(info);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const std::optional<PciAddress> wanted_address = parse_pci_bus_id(id);
    const std::string wanted_uuid = lowercase(id);
    const int count = count_devices();
    for (int device = 0; device < count; ++device) {
        if (wanted_address) {
            if (pci_address_of(device) == wanted_address) return device;
            continue;
        }
        DeviceInfo info;
        if (describe(device, info) && lowercase(info.uuid) == wanted_uuid) return device;
    }
    return -1;
}

// roomiest_ampere_or_newer() from section 1.8, with the header's requirements and tie-breaks.
int pick_device(const Requirements& needs)
{
    const int count = count_devices();
    int best = -1;
    std::size_t best_memory = 0;
    int best_sms = 0;
    PciAddress best_pci;
    for (int device = 0; device < count; ++device) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!capability_at_least(prop.major, prop.minor, needs.min_major, needs.min_minor)) continue;
        if (prop.totalGlobalMem < needs.min_memory) continue;
        const std::optional<PciAddress> pci = pci_address_of(device);
        if (!pci) continue;
        const bool more_memory = prop.totalGlobalMem > best_memory;
        const bool same_memory = prop.totalGlobalMem == best_memory;
        const bool more_sms = prop.multiProcessorCount > best_sms;
        const bool same_sms = prop.multiProcessorCount == best_sms;
        const bool lower_bus = std::tie(pci->domain, pci->bus, pci->device) <
                               std::tie(best_pci.domain, best_pci.bus, best_pci.device);
        if (best < 0 || more_memory || (same_memory && (more_sms || (same_sms && lower_bus)))) {
            best = device;
            best_memory = prop.totalGlobalMem;
            best_sms = prop.multiProcessorCount;
            best_pci = *pci;
        }
    }
    return best;
}

// CurrentDeviceRestorer from section 1.10, plus the switch.
DeviceScope::DeviceScope(int device)
{
    if (cudaGetDevice(&previous_) != cudaSuccess) {
        previous_ = -1;
        status_ = cudaGetLastError();
        return;
    }
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        previous_ = -1;   // the current device did not change: nothing to give back
    }
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0) cudaSetDevice(previous_);
}

// zero_one_buffer_per_device() from section 1.11, calling work instead of zeroing a buffer.
cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    std::vector<cudaError_t> results(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> workers;
    for (int device = 0; device < count; ++device) {
        workers.emplace_back([device, &work, &results] {
            if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) {   // first, on this thread
                results[static_cast<std::size_t>(device)] = err;
                cudaGetLastError();
                return;
            }
            work(device);
        });
    }
    for (std::thread& worker : workers) worker.join();
    for (cudaError_t err : results)
        if (err != cudaSuccess) return err;
    return cudaSuccess;
}
