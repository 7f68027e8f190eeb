// Lesson 1, device enumeration and selection: the reference solution of devices.h.
// Generated from checker/lessons/01-devices/master/devices.master.cu by tools/lessons/make-exercise;
// edit the master, not this file.
#include "devices.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

// "GPU-" and the 16 bytes of a cudaUUID_t as 8-4-4-4-12 lowercase hex digits: the form nvidia-smi -L
// prints, so that a UUID from this program can be pasted into CUDA_VISIBLE_DEVICES.
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

// Where a board sits on the PCI bus. Compared as numbers, so "0000:1B:00.0" (CUDA) and
// "00000000:1b:00.0" (nvidia-smi) are the same address.
struct PciAddress {
    unsigned domain = 0, bus = 0, device = 0;
    bool operator==(const PciAddress&) const = default;
};

// "domain:bus:device.function" in hexadecimal, the domain 4 or 8 digits long; nullopt when `id` is not
// in that form.
std::optional<PciAddress> parse_pci_bus_id(const std::string& id)
{
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int used = 0;
    if (std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &device, &function, &used) != 4) return std::nullopt;
    if (used != static_cast<int>(id.size()) || id.find(':') > 8) return std::nullopt;
    return PciAddress{domain, bus, device};
}

// The device's PCI address from three attributes: cheap, and no context needed.
std::optional<PciAddress> pci_address_of(int device)
{
    int domain = 0, bus = 0, slot = 0;
    if (cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&slot, cudaDevAttrPciDeviceId, device) != cudaSuccess) {
        cudaGetLastError();
        return std::nullopt;
    }
    return PciAddress{static_cast<unsigned>(domain), static_cast<unsigned>(bus), static_cast<unsigned>(slot)};
}

// Compute capability compared the way versions compare: the major number first, the minor only
// between equal majors. 9.0 meets "at least 8.9"; 8.0 does not.
bool capability_at_least(int major, int minor, int want_major, int want_minor)
{
    return major > want_major || (major == want_major && minor >= want_minor);
}

}  // namespace

int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        // 100 (nothing visible), 35 (no driver) and 101 (CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER refused)
        // all mean that this process has no device to use, and the runtime left `count` unwritten. The
        // code cannot be cleared (every later call answers it again), so there is nothing to tidy up.
        return 0;
    }
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int device = 0; device < count; ++device) {
        // Properties and PCI ids come from the driver's description of the board: no context is created,
        // which matters on a machine of eight GPUs where each context would cost half a GiB.
        cudaDeviceProp properties;
        if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        DeviceInfo info;
        info.ordinal = device;
        info.name = properties.name;
        info.major = properties.major;
        info.minor = properties.minor;
        info.multiprocessors = properties.multiProcessorCount;
        info.total_memory = properties.totalGlobalMem;
        char bus_id[32];   // the runtime needs 13 characters; room to spare costs nothing
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) == cudaSuccess) info.pci_bus_id = bus_id;
        else cudaGetLastError();
        info.uuid = uuid_text(properties.uuid);
        devices.push_back(info);
    }
    return devices;
}

int find_device(const std::string& id)
{
    const int count = count_devices();
    if (lowercase(id.substr(0, 4)) == "gpu-") {
        // UUIDs are hexadecimal: compare their digits in one case.
        const std::string wanted = lowercase(id.substr(4));
        for (int device = 0; device < count; ++device) {
            cudaDeviceProp properties;
            if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            if (uuid_text(properties.uuid).substr(4) == wanted) return device;
        }
        return -1;
    }
    // A bus id is compared as an address, not as text: nvidia-smi writes the domain with 8 digits and
    // CUDA with 4, and either may be upper or lower case.
    const std::optional<PciAddress> wanted = parse_pci_bus_id(id);
    if (!wanted) return -1;
    for (int device = 0; device < count; ++device) {
        if (pci_address_of(device) == wanted) return device;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    const int count = count_devices();
    int best = -1;
    // The preference as one comparable key: more memory, then more SMs, then the lower PCI address
    // (negated so that larger is better throughout).
    std::tuple<std::size_t, int, long long> best_key{};
    for (int device = 0; device < count; ++device) {
        cudaDeviceProp properties;
        if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!capability_at_least(properties.major, properties.minor, needs.min_major, needs.min_minor)) continue;
        if (properties.totalGlobalMem < needs.min_memory) continue;
        const long long address = (static_cast<long long>(properties.pciDomainID) << 16) |
                                  (static_cast<long long>(properties.pciBusID) << 8) | properties.pciDeviceID;
        const std::tuple<std::size_t, int, long long> key{properties.totalGlobalMem, properties.multiProcessorCount,
                                                          -address};
        if (best < 0 || key > best_key) {
            best = device;
            best_key = key;
        }
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    status_ = cudaGetDevice(&previous_);
    if (status_ != cudaSuccess) {
        previous_ = -1;
        cudaGetLastError();   // reported through status()
        return;
    }
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        // cudaSetDevice left the current device as it was: nothing to give back.
        previous_ = -1;
        cudaGetLastError();
    }
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0) cudaSetDevice(previous_);
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    int count = 0;
    // No device (35, 100 or 101, the count left unwritten): nothing to run, and nothing went wrong.
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return cudaSuccess;
    std::vector<cudaError_t> made_current(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> workers;
    workers.reserve(static_cast<std::size_t>(count));
    for (int device = 0; device < count; ++device) {
        workers.emplace_back([&work, &made_current, device] {
            // The current device belongs to each host thread, and a new thread starts on device 0: this
            // thread must choose its device itself before its first allocation or launch.
            made_current[static_cast<std::size_t>(device)] = cudaSetDevice(device);
            if (made_current[static_cast<std::size_t>(device)] == cudaSuccess) work(device);
            else cudaGetLastError();
        });
    }
    for (std::thread& worker : workers) worker.join();
    for (cudaError_t status : made_current) {
        if (status != cudaSuccess) return status;
    }
    return cudaSuccess;
}
