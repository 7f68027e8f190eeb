// DeviceScope: my destructor only gives the device back 'if (previous_)', so a caller that was on device 0 never gets it back.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <future>
#include <optional>
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

int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" to 16 bytes.
std::optional<cudaUUID_t> parse_uuid(const std::string& id)
{
    if (id.size() != 40 || id.compare(0, 4, "GPU-") != 0) return std::nullopt;
    cudaUUID_t out{};
    std::size_t pos = 4;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            if (id[pos] != '-') return std::nullopt;
            ++pos;
        }
        const int hi = hex_value(id[pos]), lo = hex_value(id[pos + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out.bytes[i] = static_cast<char>(hi * 16 + lo);
        pos += 2;
    }
    return out;
}

struct Pci {
    unsigned domain = 0, bus = 0, device = 0;
    bool operator==(const Pci&) const = default;
};

std::optional<Pci> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return Pci{domain, bus, device};
}

std::optional<Pci> pci_of(int device)
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

std::optional<cudaDeviceProp> props_of(int device)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    return prop;
}

}  // namespace

int count_devices()
{
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        const auto prop = props_of(d);
        if (!prop) continue;
        char bus_id[32];
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        DeviceInfo& info = devices.emplace_back();
        info.ordinal = d;
        info.name = prop->name;
        info.major = prop->major;
        info.minor = prop->minor;
        info.multiprocessors = prop->multiProcessorCount;
        info.total_memory = prop->totalGlobalMem;
        info.pci_bus_id = bus_id;
        info.uuid = uuid_text(prop->uuid);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const int n = count_devices();
    if (const auto uuid = parse_uuid(id)) {
        for (int d = 0; d < n; ++d) {
            const auto prop = props_of(d);
            if (prop && std::memcmp(prop->uuid.bytes, uuid->bytes, sizeof uuid->bytes) == 0) return d;
        }
        return -1;
    }
    if (const auto pci = parse_pci_bus_id(id)) {
        for (int d = 0; d < n; ++d)
            if (pci_of(d) == pci) return d;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    struct Candidate {
        int ordinal;
        std::size_t memory;
        int sms;
        Pci pci;
    };
    std::optional<Candidate> best;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        const auto prop = props_of(d);
        const auto pci = pci_of(d);
        if (!prop || !pci) continue;
        const bool new_enough = prop->major * 10 + prop->minor >= needs.min_major * 10 + needs.min_minor;
        if (!new_enough || prop->totalGlobalMem < needs.min_memory) continue;
        const Candidate c{d, prop->totalGlobalMem, prop->multiProcessorCount, *pci};
        auto better = [](const Candidate& a, const Candidate& b) {
            if (a.memory != b.memory) return a.memory > b.memory;
            if (a.sms != b.sms) return a.sms > b.sms;
            if (a.pci.domain != b.pci.domain) return a.pci.domain < b.pci.domain;
            if (a.pci.bus != b.pci.bus) return a.pci.bus < b.pci.bus;
            return a.pci.device < b.pci.device;
        };
        if (!best || better(c, *best)) best = c;
    }
    return best ? best->ordinal : -1;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    if (cudaError_t err = cudaGetDevice(&caller); err != cudaSuccess) {
        status_ = err;
        cudaGetLastError();
        return;
    }
    if (cudaError_t err = cudaSetDevice(device); err != cudaSuccess) {
        status_ = err;
        cudaGetLastError();
        return;
    }
    previous_ = caller;
}

DeviceScope::~DeviceScope()
{
    if (previous_) {   // something to give back
        if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
    }
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    std::vector<std::future<cudaError_t>> results;
    for (int d = 0, n = count_devices(); d < n; ++d) {
        results.push_back(std::async(std::launch::async, [d, &work]() -> cudaError_t {
            const cudaError_t err = cudaSetDevice(d);
            if (err != cudaSuccess) {
                cudaGetLastError();
                return err;
            }
            work(d);
            return cudaSuccess;
        }));
    }
    cudaError_t first = cudaSuccess;
    for (auto& result : results) {
        const cudaError_t err = result.get();
        if (first == cudaSuccess) first = err;
    }
    return first;
}
