// Style: cudaDeviceGetAttribute for every integer (capability, SMs, PCI), properties only for name/UUID/memory; packaged_task workers.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

int attribute(cudaDeviceAttr attr, int device, bool& ok)
{
    int value = 0;
    if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
        (void)cudaGetLastError();
        ok = false;
    }
    return value;
}

std::string uuid_text(const cudaUUID_t& uuid)
{
    static const char digits[] = "0123456789abcdef";
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
        const unsigned byte = static_cast<unsigned char>(uuid.bytes[i]);
        text += digits[byte >> 4];
        text += digits[byte & 0xF];
    }
    return text;
}

struct Pci {
    int domain = 0, bus = 0, device = 0;
};

bool pci_of(int device, Pci& pci)
{
    bool ok = true;
    pci.domain = attribute(cudaDevAttrPciDomainId, device, ok);
    pci.bus = attribute(cudaDevAttrPciBusId, device, ok);
    pci.device = attribute(cudaDevAttrPciDeviceId, device, ok);
    return ok;
}

bool parse_bus(const std::string& id, Pci& pci)
{
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    int used = 0;
    if (id.find(':') > 8) return false;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &slot, &function, &used) != 4) return false;
    if (used != static_cast<int>(id.size())) return false;
    pci = Pci{static_cast<int>(domain), static_cast<int>(bus), static_cast<int>(slot)};
    return true;
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
            (void)cudaGetLastError();
            continue;
        }
        bool ok = true;
        DeviceInfo info;
        info.ordinal = d;
        info.name = prop.name;
        info.major = attribute(cudaDevAttrComputeCapabilityMajor, d, ok);
        info.minor = attribute(cudaDevAttrComputeCapabilityMinor, d, ok);
        info.multiprocessors = attribute(cudaDevAttrMultiProcessorCount, d, ok);
        info.total_memory = prop.totalGlobalMem;
        info.pci_bus_id = bus_id;
        info.uuid = uuid_text(prop.uuid);
        if (ok) devices.push_back(info);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const int count = count_devices();
    Pci wanted;
    if (parse_bus(id, wanted)) {
        for (int d = 0; d < count; ++d) {
            Pci here;
            if (pci_of(d, here) && here.domain == wanted.domain && here.bus == wanted.bus && here.device == wanted.device)
                return d;
        }
        return -1;
    }
    std::string folded;
    for (char c : id) folded += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (folded.rfind("gpu-", 0) != 0) return -1;
    folded.replace(0, 4, "GPU-");
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (uuid_text(prop.uuid) == folded) return d;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    const int count = count_devices();
    int best = -1, best_sms = 0;
    std::size_t best_memory = 0;
    Pci best_pci;
    for (int d = 0; d < count; ++d) {
        bool ok = true;
        const int major = attribute(cudaDevAttrComputeCapabilityMajor, d, ok);
        const int minor = attribute(cudaDevAttrComputeCapabilityMinor, d, ok);
        const int sms = attribute(cudaDevAttrMultiProcessorCount, d, ok);
        Pci pci;
        if (!ok || !pci_of(d, pci)) continue;
        if (major < needs.min_major || (major == needs.min_major && minor < needs.min_minor)) continue;
        cudaDeviceProp prop;   // total memory has no attribute
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        const std::size_t memory = prop.totalGlobalMem;
        if (memory < needs.min_memory) continue;
        bool better;
        if (best < 0) better = true;
        else if (memory != best_memory) better = memory > best_memory;
        else if (sms != best_sms) better = sms > best_sms;
        else if (pci.domain != best_pci.domain) better = pci.domain < best_pci.domain;
        else if (pci.bus != best_pci.bus) better = pci.bus < best_pci.bus;
        else better = pci.device < best_pci.device;
        if (better) {
            best = d;
            best_memory = memory;
            best_sms = sms;
            best_pci = pci;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    status_ = cudaGetDevice(&previous_);
    if (status_ == cudaSuccess) {
        status_ = cudaSetDevice(device);
        if (status_ == cudaSuccess) return;
    }
    previous_ = -1;
    (void)cudaGetLastError();
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::vector<std::future<cudaError_t>> results;
    std::vector<std::thread> threads;
    for (int d = 0, count = count_devices(); d < count; ++d) {
        std::packaged_task<cudaError_t()> task([d, &work] {
            const cudaError_t err = cudaSetDevice(d);
            if (err != cudaSuccess) {
                (void)cudaGetLastError();
                return err;
            }
            work(d);
            return cudaSuccess;
        });
        results.push_back(task.get_future());
        threads.emplace_back(std::move(task));
    }
    for (std::thread& t : threads) t.join();
    cudaError_t first = cudaSuccess;
    for (auto& r : results) {
        const cudaError_t err = r.get();
        if (first == cudaSuccess && err != cudaSuccess) first = err;
    }
    return first;
}
