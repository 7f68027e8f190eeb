// Style: like an OpenMP team without OpenMP: the calling thread takes the last device itself, spawned threads take the rest, caller's device given back.
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

bool bus_numbers(const std::string& id, unsigned (&out)[3])
{
    unsigned function = 0;
    int used = 0;
    return id.find(':') <= 8 && std::sscanf(id.c_str(), "%8x:%2x:%2x.%1x%n", &out[0], &out[1], &out[2], &function, &used) == 4 &&
           used == static_cast<int>(id.size());
}

bool bus_numbers(int device, unsigned (&out)[3])
{
    const cudaDeviceAttr which[3] = {cudaDevAttrPciDomainId, cudaDevAttrPciBusId, cudaDevAttrPciDeviceId};
    for (int i = 0; i < 3; ++i) {
        int v = 0;
        if (cudaDeviceGetAttribute(&v, which[i], device) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        out[i] = static_cast<unsigned>(v);
    }
    return true;
}

// -1, 0, 1 like strcmp, over domain, bus, device
int compare_bus(const unsigned (&a)[3], const unsigned (&b)[3])
{
    for (int i = 0; i < 3; ++i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

cudaError_t run_on(int device, const std::function<void(int)>& work)
{
    const cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess) {
        cudaGetLastError();
        return err;
    }
    work(device);
    return cudaSuccess;
}

}  // namespace

int count_devices()
{
    int count = 0;
    return cudaGetDeviceCount(&count) != cudaSuccess ? 0 : count;
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
    unsigned wanted[3];
    const bool by_bus = bus_numbers(id, wanted);
    std::string folded(id);
    for (char& c : folded) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));   // compare in upper case
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        if (by_bus) {
            unsigned here[3];
            if (bus_numbers(d, here) && compare_bus(here, wanted) == 0) return d;
            continue;
        }
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        std::string text = uuid_text(prop.uuid);
        for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (text == folded) return d;
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    std::size_t best_memory = 0;
    int best_sms = -1;
    unsigned best_bus[3] = {0, 0, 0};
    const int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        unsigned bus[3];
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!bus_numbers(d, bus)) continue;
        if (prop.major < needs.min_major) continue;
        if (prop.major == needs.min_major && prop.minor < needs.min_minor) continue;
        if (prop.totalGlobalMem < needs.min_memory) continue;
        if (best != -1) {
            if (prop.totalGlobalMem < best_memory) continue;
            if (prop.totalGlobalMem == best_memory && prop.multiProcessorCount < best_sms) continue;
            if (prop.totalGlobalMem == best_memory && prop.multiProcessorCount == best_sms && compare_bus(bus, best_bus) > 0)
                continue;
        }
        best = d;
        best_memory = prop.totalGlobalMem;
        best_sms = prop.multiProcessorCount;
        for (int i = 0; i < 3; ++i) best_bus[i] = bus[i];
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    status_ = cudaGetDevice(&previous_);
    if (status_ == cudaSuccess) status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) {
        previous_ = -1;
        cudaGetLastError();
    }
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    const int count = count_devices();
    if (count == 0) return cudaSuccess;
    int caller = 0;
    const bool know_caller = cudaGetDevice(&caller) == cudaSuccess;
    if (!know_caller) cudaGetLastError();
    std::vector<cudaError_t> results(static_cast<std::size_t>(count), cudaSuccess);
    std::vector<std::thread> helpers;
    for (int d = 0; d + 1 < count; ++d)
        helpers.emplace_back([d, &work, &results] { results[static_cast<std::size_t>(d)] = run_on(d, work); });
    results.back() = run_on(count - 1, work);   // this thread is a host thread of its own too
    for (std::thread& t : helpers) t.join();
    if (know_caller && cudaSetDevice(caller) != cudaSuccess) cudaGetLastError();
    for (cudaError_t r : results)
        if (r != cudaSuccess) return r;
    return cudaSuccess;
}
