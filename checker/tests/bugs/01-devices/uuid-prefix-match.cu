// find_device: CUDA_VISIBLE_DEVICES accepts UUID prefixes, so I match any prefix of a device's UUID; an
// empty or cut-off string then matches the first device.
#include "devices.h"

#include <omp.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct Entry {
    DeviceInfo info;
    unsigned domain = 0, bus = 0, slot = 0;
};

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

std::vector<Entry> read_inventory()
{
    std::vector<Entry> entries;
    const int n = count_devices();
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp prop;
        char bus_id[32];
        int domain = 0, bus = 0, slot = 0;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess ||
            cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, d) != cudaSuccess ||
            cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d) != cudaSuccess ||
            cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        Entry e;
        e.info = DeviceInfo{d, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem, bus_id,
                            uuid_text(prop.uuid)};
        e.domain = static_cast<unsigned>(domain);
        e.bus = static_cast<unsigned>(bus);
        e.slot = static_cast<unsigned>(slot);
        entries.push_back(e);
    }
    return entries;
}

// The device list cannot change within a process (CUDA_VISIBLE_DEVICES is read once), so read it once.
const std::vector<Entry>& inventory()
{
    static const std::vector<Entry> entries = read_inventory();
    return entries;
}

}  // namespace

int count_devices()
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> out;
    for (const Entry& e : inventory()) out.push_back(e.info);
    return out;
}

int find_device(const std::string& id)
{
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    int used = 0;
    const bool by_bus = id.find(':') <= 8 &&
                        std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &slot, &function, &used) == 4 &&
                        used == static_cast<int>(id.size());
    const std::string uuid = lowercase(id);
    for (const Entry& e : inventory()) {
        if (by_bus ? (e.domain == domain && e.bus == bus && e.slot == slot) : lowercase(e.info.uuid).rfind(uuid, 0) == 0)
            return e.info.ordinal;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    const Entry* best = nullptr;
    for (const Entry& e : inventory()) {
        const DeviceInfo& i = e.info;
        if (i.major < needs.min_major || (i.major == needs.min_major && i.minor < needs.min_minor)) continue;
        if (i.total_memory < needs.min_memory) continue;
        if (best != nullptr) {
            const DeviceInfo& b = best->info;
            if (i.total_memory != b.total_memory) {
                if (i.total_memory < b.total_memory) continue;
            } else if (i.multiprocessors != b.multiprocessors) {
                if (i.multiprocessors < b.multiprocessors) continue;
            } else if (e.domain != best->domain) {
                if (e.domain > best->domain) continue;
            } else if (e.bus != best->bus) {
                if (e.bus > best->bus) continue;
            } else if (e.slot >= best->slot) {
                continue;
            }
        }
        best = &e;
    }
    return best ? best->info.ordinal : -1;
}

DeviceScope::DeviceScope(int device)
{
    int here = -1;
    status_ = cudaGetDevice(&here);
    if (status_ == cudaSuccess) status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    previous_ = here;
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int n = count_devices();
    if (n == 0) return cudaSuccess;
    int caller = 0;
    if (cudaGetDevice(&caller) != cudaSuccess) cudaGetLastError();
    std::vector<cudaError_t> status(static_cast<std::size_t>(n), cudaSuccess);
    const int dynamic = omp_get_dynamic();
    omp_set_dynamic(0);   // ask for exactly n threads
#pragma omp parallel num_threads(n)
    {
        const int threads = omp_get_num_threads();
        for (int d = omp_get_thread_num(); d < n; d += threads) {   // one device per thread when all n came
            const cudaError_t err = cudaSetDevice(d);
            if (err == cudaSuccess) {
                work(d);
            } else {
                cudaGetLastError();
                status[static_cast<std::size_t>(d)] = err;
            }
        }
        if (omp_get_thread_num() == 0 && cudaSetDevice(caller) != cudaSuccess) cudaGetLastError();
    }
    omp_set_dynamic(dynamic);
    for (cudaError_t err : status)
        if (err != cudaSuccess) return err;
    return cudaSuccess;
}
