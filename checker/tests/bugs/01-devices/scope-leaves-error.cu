// DeviceScope: for an invalid device I keep the status for status() but I do not clear the error that
// cudaSetDevice left behind.
#include "devices.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <latch>
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

// One spelling for every way of writing the same thing: "pci:DDDDDDDD:BB:SS" for a bus id (function dropped),
// "uuid:gpu-..." for anything else, lower case.
std::string canonical(const std::string& id)
{
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    int used = 0;
    if (id.find(':') <= 8 && std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &domain, &bus, &slot, &function, &used) == 4 &&
        used == static_cast<int>(id.size())) {
        char text[40];
        std::snprintf(text, sizeof text, "pci:%08x:%02x:%02x", domain, bus, slot);
        return text;
    }
    std::string lower = id;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return "uuid:" + lower;
}

struct Ranked {
    int ordinal;
    std::size_t memory;
    int sms;
    std::string bus;   // canonical, fixed width, so string order is address order
};

}  // namespace

int count_devices()
{
    int count = 0;
    switch (cudaGetDeviceCount(&count)) {
    case cudaSuccess:
        return count;
    default:   // cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorInvalidDevice
        return 0;
    }
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        char bus_id[32];
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) {
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
    const std::string wanted = canonical(id);
    for (const DeviceInfo& d : list_devices()) {
        if (canonical(d.pci_bus_id) == wanted || canonical(d.uuid) == wanted) return d.ordinal;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    bool found = false;
    Ranked best{};
    for (const DeviceInfo& d : list_devices()) {
        const bool cc = d.major != needs.min_major ? d.major > needs.min_major : d.minor >= needs.min_minor;
        if (!cc || d.total_memory < needs.min_memory) continue;
        const Ranked r{d.ordinal, d.total_memory, d.multiprocessors, canonical(d.pci_bus_id)};
        const bool better = !found || r.memory > best.memory || (r.memory == best.memory && r.sms > best.sms) ||
                            (r.memory == best.memory && r.sms == best.sms && r.bus < best.bus);
        if (better) {
            best = r;
            found = true;
        }
    }
    return found ? best.ordinal : -1;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    const cudaError_t got = cudaGetDevice(&caller);
    status_ = got == cudaSuccess ? cudaSetDevice(device) : got;
    if (status_ == cudaSuccess) previous_ = caller;   // else status() tells the caller why
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    if (count == 0) return cudaSuccess;
    std::latch start(count);
    std::vector<cudaError_t> errors(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(count));
    for (int d = 0; d < count; ++d) {
        threads.emplace_back([d, &work, &errors, &start] {
            const cudaError_t err = cudaSetDevice(d);
            start.arrive_and_wait();   // every device set up before any work starts
            if (err != cudaSuccess) {
                cudaGetLastError();
                errors[static_cast<std::size_t>(d)] = err;
                return;
            }
            work(d);
        });
    }
    for (std::thread& t : threads) t.join();
    const auto bad = std::find_if(errors.begin(), errors.end(), [](cudaError_t e) { return e != cudaSuccess; });
    return bad == errors.end() ? cudaSuccess : *bad;
}
