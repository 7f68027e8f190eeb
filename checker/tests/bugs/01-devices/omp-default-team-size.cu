// for_each_device: I left out num_threads, so the OpenMP team has as many threads as cores, not as devices,
// and one thread runs several devices' work.
#include "devices.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
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

bool same_text_ignoring_case(const std::string& a, const std::string& b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

bool parse_bus(const std::string& id, unsigned& domain, unsigned& bus, unsigned& slot)
{
    unsigned function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &slot, &function, &used) != 4) return false;
    return used == static_cast<int>(id.size()) && id.find(':') <= 8;
}

bool bus_of(int device, unsigned& domain, unsigned& bus, unsigned& slot)
{
    int values[3] = {0, 0, 0};
    const cudaDeviceAttr attrs[3] = {cudaDevAttrPciDomainId, cudaDevAttrPciBusId, cudaDevAttrPciDeviceId};
    for (int i = 0; i < 3; ++i) {
        if (cudaDeviceGetAttribute(&values[i], attrs[i], device) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
    }
    domain = static_cast<unsigned>(values[0]);
    bus = static_cast<unsigned>(values[1]);
    slot = static_cast<unsigned>(values[2]);
    return true;
}

}  // namespace

int count_devices()
{
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    return err == cudaSuccess ? n : 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int n = count_devices();
    devices.reserve(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp prop{};
        char bus_id[16] = {};
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        devices.push_back(DeviceInfo{d, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem,
                                     bus_id, uuid_text(prop.uuid)});
    }
    return devices;
}

int find_device(const std::string& id)
{
    const int n = count_devices();
    unsigned dom = 0, bus = 0, slot = 0;
    const bool is_bus = parse_bus(id, dom, bus, slot);
    for (int d = 0; d < n; ++d) {
        if (is_bus) {
            unsigned d_dom = 0, d_bus = 0, d_slot = 0;
            if (bus_of(d, d_dom, d_bus, d_slot) && d_dom == dom && d_bus == bus && d_slot == slot) return d;
        } else {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            if (same_text_ignoring_case(uuid_text(prop.uuid), id)) return d;
        }
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    const int n = count_devices();
    int best = -1;
    std::size_t best_mem = 0;
    int best_sms = 0;
    unsigned best_dom = 0, best_bus = 0, best_slot = 0;
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp prop{};
        unsigned dom = 0, bus = 0, slot = 0;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!bus_of(d, dom, bus, slot)) continue;
        const bool cc_ok = prop.major > needs.min_major || (prop.major == needs.min_major && prop.minor >= needs.min_minor);
        if (!cc_ok || prop.totalGlobalMem < needs.min_memory) continue;
        bool take = best < 0 || prop.totalGlobalMem > best_mem;
        if (!take && prop.totalGlobalMem == best_mem) {
            if (prop.multiProcessorCount > best_sms) take = true;
            else if (prop.multiProcessorCount == best_sms) {
                if (dom != best_dom) take = dom < best_dom;
                else if (bus != best_bus) take = bus < best_bus;
                else take = slot < best_slot;
            }
        }
        if (take) {
            best = d;
            best_mem = prop.totalGlobalMem;
            best_sms = prop.multiProcessorCount;
            best_dom = dom;
            best_bus = bus;
            best_slot = slot;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    if ((status_ = cudaGetDevice(&previous_)) != cudaSuccess) {
        previous_ = -1;
        cudaGetLastError();
    } else if ((status_ = cudaSetDevice(device)) != cudaSuccess) {
        previous_ = -1;   // nothing changed, nothing to give back
        cudaGetLastError();
    }
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
#pragma omp parallel for schedule(static, 1)
    for (int d = 0; d < n; ++d) {
        const cudaError_t err = cudaSetDevice(d);
        if (err != cudaSuccess) {
            cudaGetLastError();
            status[static_cast<std::size_t>(d)] = err;
        } else {
            work(d);
        }
        if (omp_get_thread_num() == 0 && cudaSetDevice(caller) != cudaSuccess) cudaGetLastError();
    }
    for (cudaError_t err : status)
        if (err != cudaSuccess) return err;
    return cudaSuccess;
}
