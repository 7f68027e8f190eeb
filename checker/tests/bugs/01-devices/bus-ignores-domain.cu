// find_device: I compare only the bus and device numbers of a PCI address; I thought the domain is always 0.
#include "devices.h"

#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
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

enum class IdKind { bus, uuid, unknown };

struct ParsedId {
    IdKind kind = IdKind::unknown;
    unsigned domain = 0, bus = 0, slot = 0;
    std::string uuid;   // lower case
};

ParsedId classify(const std::string& id)
{
    ParsedId p;
    unsigned function = 0;
    int used = 0;
    if (id.find(':') <= 8 && std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &p.domain, &p.bus, &p.slot, &function, &used) == 4 &&
        used == static_cast<int>(id.size())) {
        p.kind = IdKind::bus;
        return p;
    }
    if (id.size() == 40 && (id[0] == 'G' || id[0] == 'g')) {
        p.kind = IdKind::uuid;
        for (char c : id) p.uuid += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return p;
}

struct Probe {
    bool ok = false;
    cudaDeviceProp prop{};
    int domain = 0, bus = 0, slot = 0;
};

Probe probe(int device)
{
    Probe p;
    p.ok = cudaGetDeviceProperties(&p.prop, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&p.domain, cudaDevAttrPciDomainId, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&p.bus, cudaDevAttrPciBusId, device) == cudaSuccess &&
           cudaDeviceGetAttribute(&p.slot, cudaDevAttrPciDeviceId, device) == cudaSuccess;
    if (!p.ok) cudaGetLastError();
    return p;
}

std::string lower(std::string s)
{
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace

int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess) return count;
    return 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        char bus_id[32];
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        DeviceInfo info;
        info.ordinal = d;
        info.name.assign(prop.name, strnlen(prop.name, sizeof prop.name));
        info.major = prop.major;
        info.minor = prop.minor;
        info.multiprocessors = prop.multiProcessorCount;
        info.total_memory = prop.totalGlobalMem;
        info.pci_bus_id = bus_id;
        info.uuid = uuid_text(prop.uuid);
        devices.push_back(info);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const ParsedId want = classify(id);
    if (want.kind == IdKind::unknown) return -1;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        const Probe p = probe(d);
        if (!p.ok) continue;
        switch (want.kind) {
        case IdKind::bus:
            if (static_cast<unsigned>(p.bus) == want.bus && static_cast<unsigned>(p.slot) == want.slot)   // domain is 0 anyway
                return d;
            break;
        case IdKind::uuid:
            if (lower(uuid_text(p.prop.uuid)) == want.uuid) return d;
            break;
        case IdKind::unknown:
            break;
        }
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    Probe top;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        const Probe p = probe(d);
        if (!p.ok) continue;
        const int have = p.prop.major * 1000 + p.prop.minor;
        const int want = needs.min_major * 1000 + needs.min_minor;
        if (have < want || p.prop.totalGlobalMem < needs.min_memory) continue;
        bool take = best == -1;
        if (!take) {
            const auto& a = p.prop;
            const auto& b = top.prop;
            if (a.totalGlobalMem > b.totalGlobalMem) take = true;
            else if (a.totalGlobalMem == b.totalGlobalMem) {
                if (a.multiProcessorCount > b.multiProcessorCount) take = true;
                else if (a.multiProcessorCount == b.multiProcessorCount) {
                    const unsigned long long ka = (static_cast<unsigned long long>(p.domain) << 24) |
                                                  (static_cast<unsigned long long>(p.bus) << 8) | static_cast<unsigned>(p.slot);
                    const unsigned long long kb = (static_cast<unsigned long long>(top.domain) << 24) |
                                                  (static_cast<unsigned long long>(top.bus) << 8) | static_cast<unsigned>(top.slot);
                    take = ka < kb;
                }
            }
        }
        if (take) {
            best = d;
            top = p;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    status_ = cudaGetDevice(&caller);
    if (status_ == cudaSuccess) {
        status_ = cudaSetDevice(device);
        if (status_ == cudaSuccess) {
            previous_ = caller;
            return;
        }
    }
    cudaGetLastError();
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0) {
        if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
    }
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    struct Shared {
        std::mutex mutex;
        std::condition_variable done;
        int remaining = 0;
        cudaError_t first = cudaSuccess;
    };
    const int count = count_devices();
    if (count == 0) return cudaSuccess;
    auto shared = std::make_shared<Shared>();
    shared->remaining = count;
    for (int d = 0; d < count; ++d) {
        std::thread([d, &work, shared] {
            const cudaError_t err = cudaSetDevice(d);
            if (err == cudaSuccess) work(d);
            else cudaGetLastError();
            std::lock_guard<std::mutex> lock(shared->mutex);
            if (err != cudaSuccess && shared->first == cudaSuccess) shared->first = err;
            if (--shared->remaining == 0) shared->done.notify_all();
        }).detach();
    }
    std::unique_lock<std::mutex> lock(shared->mutex);
    shared->done.wait(lock, [&] { return shared->remaining == 0; });
    return shared->first;
}
