// list_devices: bytes are unreadable, so I stored the total memory in MiB.
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

}  // namespace

int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        char bus_id[32] = {};
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
            cudaGetLastError();
            bus_id[0] = '\0';
        }
        DeviceInfo info;
        info.ordinal = d;
        info.name = prop.name;
        info.major = prop.major;
        info.minor = prop.minor;
        info.multiprocessors = prop.multiProcessorCount;
        info.total_memory = prop.totalGlobalMem / (1024 * 1024);   // MiB, easier to read
        info.pci_bus_id = bus_id;
        info.uuid = uuid_text(prop.uuid);
        devices.push_back(info);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const int count = count_devices();
    const std::string wanted = lowercase(id);
    if (wanted.rfind("gpu-", 0) == 0) {
        for (int d = 0; d < count; ++d) {
            cudaDeviceProp prop;
            if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            if (lowercase(uuid_text(prop.uuid)) == wanted) return d;
        }
        return -1;
    }
    const std::optional<PciAddress> address = parse_pci_bus_id(id);
    if (!address) return -1;
    for (int d = 0; d < count; ++d) {
        if (pci_address_of(d) == address) return d;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    const int count = count_devices();
    int best = -1;
    std::size_t best_memory = 0;
    int best_sms = 0;
    PciAddress best_address;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!capability_at_least(prop.major, prop.minor, needs.min_major, needs.min_minor)) continue;
        if (prop.totalGlobalMem < needs.min_memory) continue;
        const std::optional<PciAddress> address = pci_address_of(d);
        if (!address) continue;
        const auto key = std::make_tuple(address->domain, address->bus, address->device);
        const auto best_key = std::make_tuple(best_address.domain, best_address.bus, best_address.device);
        bool better = false;
        if (best < 0) better = true;
        else if (prop.totalGlobalMem != best_memory) better = prop.totalGlobalMem > best_memory;
        else if (prop.multiProcessorCount != best_sms) better = prop.multiProcessorCount > best_sms;
        else better = key < best_key;
        if (better) {
            best = d;
            best_memory = prop.totalGlobalMem;
            best_sms = prop.multiProcessorCount;
            best_address = *address;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    status_ = cudaGetDevice(&caller);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    previous_ = caller;
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    std::vector<cudaError_t> errors(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> workers;
    for (int d = 0; d < count; ++d) {
        workers.emplace_back([d, &work, &errors] {
            const cudaError_t err = cudaSetDevice(d);
            if (err != cudaSuccess) {
                cudaGetLastError();
                errors[static_cast<std::size_t>(d)] = err;
                return;
            }
            work(d);
        });
    }
    for (std::thread& worker : workers) worker.join();
    for (cudaError_t err : errors) {
        if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
}
