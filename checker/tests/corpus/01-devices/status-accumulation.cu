// Style: status accumulation: each step runs only while `st` is still cudaSuccess, errors cleared once at the end.
#include "devices.h"

#include <cctype>
#include <cstdio>
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

struct Board {
    cudaDeviceProp prop;
    int domain = 0, bus = 0, slot = 0;
    char bus_id[32] = {};
};

cudaError_t query(int device, Board& b)
{
    cudaError_t st = cudaGetDeviceProperties(&b.prop, device);
    if (st == cudaSuccess) st = cudaDeviceGetAttribute(&b.domain, cudaDevAttrPciDomainId, device);
    if (st == cudaSuccess) st = cudaDeviceGetAttribute(&b.bus, cudaDevAttrPciBusId, device);
    if (st == cudaSuccess) st = cudaDeviceGetAttribute(&b.slot, cudaDevAttrPciDeviceId, device);
    if (st == cudaSuccess) st = cudaDeviceGetPCIBusId(b.bus_id, sizeof b.bus_id, device);
    if (st != cudaSuccess) (void)cudaGetLastError();
    return st;
}

bool parse_bus(const std::string& id, int& domain, int& bus, int& slot)
{
    unsigned d = 0, b = 0, s = 0, f = 0;
    int used = 0;
    const std::size_t colon = id.find(':');
    if (colon != 4 && colon != 8) return false;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &d, &b, &s, &f, &used) != 4) return false;
    if (used != static_cast<int>(id.size())) return false;
    domain = static_cast<int>(d);
    bus = static_cast<int>(b);
    slot = static_cast<int>(s);
    return true;
}

}  // namespace

int count_devices()
{
    int count = 0;
    const cudaError_t st = cudaGetDeviceCount(&count);
    if (st != cudaSuccess) count = 0;
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> out;
    const int n = count_devices();
    for (int d = 0; d < n; ++d) {
        Board b;
        if (query(d, b) != cudaSuccess) continue;
        DeviceInfo info;
        info.ordinal = d;
        info.name = b.prop.name;
        info.major = b.prop.major;
        info.minor = b.prop.minor;
        info.multiprocessors = b.prop.multiProcessorCount;
        info.total_memory = b.prop.totalGlobalMem;
        info.pci_bus_id = b.bus_id;
        info.uuid = uuid_text(b.prop.uuid);
        out.push_back(info);
    }
    return out;
}

int find_device(const std::string& id)
{
    int domain = -1, bus = -1, slot = -1;
    const bool by_bus = parse_bus(id, domain, bus, slot);
    const std::string uuid = lowercase(id);
    int found = -1;
    const int n = count_devices();
    for (int d = 0; d < n && found < 0; ++d) {
        Board b;
        if (query(d, b) != cudaSuccess) continue;
        const bool match = by_bus ? (b.domain == domain && b.bus == bus && b.slot == slot)
                                  : lowercase(uuid_text(b.prop.uuid)) == uuid;
        if (match) found = d;
    }
    return found;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    Board top;
    const int n = count_devices();
    for (int d = 0; d < n; ++d) {
        Board b;
        if (query(d, b) != cudaSuccess) continue;
        const cudaDeviceProp& p = b.prop;
        const bool fits = (p.major > needs.min_major || (p.major == needs.min_major && p.minor >= needs.min_minor)) &&
                          p.totalGlobalMem >= needs.min_memory;
        if (!fits) continue;
        int order = 0;   // > 0: b beats top
        if (best < 0) order = 1;
        if (order == 0 && p.totalGlobalMem != top.prop.totalGlobalMem) order = p.totalGlobalMem > top.prop.totalGlobalMem ? 1 : -1;
        if (order == 0 && p.multiProcessorCount != top.prop.multiProcessorCount)
            order = p.multiProcessorCount > top.prop.multiProcessorCount ? 1 : -1;
        if (order == 0 && b.domain != top.domain) order = b.domain < top.domain ? 1 : -1;
        if (order == 0 && b.bus != top.bus) order = b.bus < top.bus ? 1 : -1;
        if (order == 0 && b.slot != top.slot) order = b.slot < top.slot ? 1 : -1;
        if (order > 0) {
            best = d;
            top = b;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    cudaError_t st = cudaGetDevice(&caller);
    if (st == cudaSuccess) st = cudaSetDevice(device);
    if (st == cudaSuccess) previous_ = caller;
    else (void)cudaGetLastError();
    status_ = st;
}

DeviceScope::~DeviceScope()
{
    cudaError_t st = cudaSuccess;
    if (status_ == cudaSuccess && previous_ >= 0) st = cudaSetDevice(previous_);
    if (st != cudaSuccess) (void)cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int n = count_devices();
    std::vector<cudaError_t> st(static_cast<std::size_t>(n), cudaSuccess);
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d)
        pool.emplace_back([&st, &work, d] {
            cudaError_t& mine = st[static_cast<std::size_t>(d)];
            mine = cudaSetDevice(d);
            if (mine == cudaSuccess) work(d);
            else (void)cudaGetLastError();
        });
    for (auto& t : pool) t.join();
    cudaError_t result = cudaSuccess;
    for (int d = 0; d < n; ++d)
        if (result == cudaSuccess) result = st[static_cast<std::size_t>(d)];
    return result;
}
