// Style: reuses its own pieces: worker threads make their device current with DeviceScope, pick_device ranks with a defaulted operator<=>.
#include "devices.h"

#include <cctype>
#include <compare>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
    auto operator<=>(const PciAddress&) const = default;
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

// Ordered so that the greater Rank is the better device.
struct Rank {
    std::size_t memory;
    int sms;
    PciAddress negated_address;   // complemented, so that a lower address ranks higher
    auto operator<=>(const Rank&) const = default;
};

}  // namespace

int count_devices()
{
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    return status == cudaSuccess ? count : 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        cudaDeviceProp prop;
        char bus_id[32];
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        DeviceInfo info;
        info.ordinal = d;
        info.name = prop.name;
        info.major = prop.major;
        info.minor = prop.minor;
        info.multiprocessors = prop.multiProcessorCount;
        info.total_memory = prop.totalGlobalMem;
        info.pci_bus_id = bus_id;
        info.uuid = uuid_text(prop.uuid);
        devices.push_back(std::move(info));
    }
    return devices;
}

int find_device(const std::string& id)
{
    const auto address = parse_pci_bus_id(id);
    const std::string uuid = lowercase(id);
    for (const DeviceInfo& info : list_devices()) {
        if (address ? parse_pci_bus_id(info.pci_bus_id) == address : lowercase(info.uuid) == uuid) return info.ordinal;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    std::optional<Rank> best_rank;
    for (const DeviceInfo& info : list_devices()) {
        if ((info.major <=> needs.min_major) < 0) continue;
        if (info.major == needs.min_major && info.minor < needs.min_minor) continue;
        if (info.total_memory < needs.min_memory) continue;
        const auto address = pci_address_of(info.ordinal);
        if (!address) continue;
        const Rank rank{info.total_memory, info.multiprocessors, {~address->domain, ~address->bus, ~address->device}};
        if (!best_rank || rank > *best_rank) {
            best_rank = rank;
            best = info.ordinal;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    if ((status_ = cudaGetDevice(&caller)) != cudaSuccess || (status_ = cudaSetDevice(device)) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    previous_ = caller;
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::mutex mutex;
    cudaError_t first = cudaSuccess;
    std::vector<std::thread> threads;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        threads.emplace_back([&, d] {
            DeviceScope scope(d);
            if (scope.status() != cudaSuccess) {
                std::scoped_lock lock(mutex);
                if (first == cudaSuccess) first = scope.status();
                return;
            }
            work(d);
        });
    }
    for (std::thread& t : threads) t.join();
    return first;
}
