// count_devices: I only turned 'no device' (100) into 0; with no driver (35) or a refused device list (101)
// I return my -1 placeholder.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// Remembers whether any CUDA call under it failed, and clears the thread's last error when it goes away.
class ErrorGuard {
public:
    ErrorGuard() = default;
    ErrorGuard(const ErrorGuard&) = delete;
    ErrorGuard& operator=(const ErrorGuard&) = delete;
    ~ErrorGuard()
    {
        if (failed_) (void)cudaGetLastError();
    }
    bool ok(cudaError_t err)
    {
        if (err != cudaSuccess) failed_ = true;
        return err == cudaSuccess;
    }

private:
    bool failed_ = false;
};

// Joins every thread it owns when it goes away, also when an exception unwinds through it.
class ThreadGroup {
public:
    ThreadGroup() = default;
    ThreadGroup(const ThreadGroup&) = delete;
    ThreadGroup& operator=(const ThreadGroup&) = delete;
    ~ThreadGroup()
    {
        for (std::thread& t : threads_)
            if (t.joinable()) t.join();
    }
    template <class F>
    void spawn(F&& f)
    {
        threads_.emplace_back(std::forward<F>(f));
    }

private:
    std::vector<std::thread> threads_;
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

struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0;
    auto operator<=>(const PciAddress&) const = default;
};

std::optional<PciAddress> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return PciAddress{domain, bus, device};
}

std::optional<PciAddress> pci_address_of(int device)
{
    ErrorGuard guard;
    int domain = 0, bus = 0, slot = 0;
    if (!guard.ok(cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device)) ||
        !guard.ok(cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device)) ||
        !guard.ok(cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device)))
        return std::nullopt;
    return PciAddress{static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

std::optional<DeviceInfo> info_of(int device)
{
    ErrorGuard guard;
    cudaDeviceProp prop;
    char bus_id[32];
    if (!guard.ok(cudaGetDeviceProperties(&prop, device))) return std::nullopt;
    if (!guard.ok(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device))) return std::nullopt;
    DeviceInfo info;
    info.ordinal = device;
    info.name = prop.name;
    info.major = prop.major;
    info.minor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    info.total_memory = prop.totalGlobalMem;
    info.pci_bus_id = bus_id;
    info.uuid = uuid_text(prop.uuid);
    return info;
}

}  // namespace

int count_devices()
{
    int count = -1;   // -1 until the runtime tells us
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorNoDevice) return 0;   // CUDA_VISIBLE_DEVICES empty: nothing to use
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int d = 0; d < count; ++d)
        if (auto info = info_of(d)) devices.push_back(std::move(*info));
    return devices;
}

int find_device(const std::string& id)
{
    if (const auto wanted = parse_pci_bus_id(id)) {
        for (int d = 0, n = count_devices(); d < n; ++d)
            if (pci_address_of(d) == wanted) return d;
        return -1;
    }
    const std::string wanted = lowercase(id);
    for (const DeviceInfo& info : list_devices())
        if (lowercase(info.uuid) == wanted) return info.ordinal;
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    DeviceInfo best_info;
    PciAddress best_pci;
    for (const DeviceInfo& info : list_devices()) {
        const bool capable = info.major > needs.min_major || (info.major == needs.min_major && info.minor >= needs.min_minor);
        if (!capable || info.total_memory < needs.min_memory) continue;
        const auto pci = pci_address_of(info.ordinal);
        if (!pci) continue;
        bool wins = best < 0;
        if (!wins) {
            if (info.total_memory != best_info.total_memory) wins = info.total_memory > best_info.total_memory;
            else if (info.multiprocessors != best_info.multiprocessors) wins = info.multiprocessors > best_info.multiprocessors;
            else wins = *pci < best_pci;
        }
        if (wins) {
            best = info.ordinal;
            best_info = info;
            best_pci = *pci;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    ErrorGuard guard;
    int caller = -1;
    if (!guard.ok(status_ = cudaGetDevice(&caller))) return;
    if (!guard.ok(status_ = cudaSetDevice(device))) return;
    previous_ = caller;
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    ErrorGuard guard;
    guard.ok(cudaSetDevice(previous_));
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    std::vector<cudaError_t> status(static_cast<std::size_t>(count), cudaSuccess);
    {
        ThreadGroup group;
        for (int d = 0; d < count; ++d) {
            group.spawn([d, &work, slot = &status[static_cast<std::size_t>(d)]] {
                ErrorGuard guard;
                if (!guard.ok(*slot = cudaSetDevice(d))) return;
                work(d);
            });
        }
    }
    for (const cudaError_t err : status)
        if (err != cudaSuccess) return err;
    return cudaSuccess;
}
