// find_device: my bus id parser only accepts CUDA's 4-digit domain, so nvidia-smi's 8-digit spelling is
// treated as a UUID and never found.
#include "devices.h"

#include <pthread.h>
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void format_uuid(const cudaUUID_t* uuid, char out[41])
{
    const unsigned char* b = reinterpret_cast<const unsigned char*>(uuid->bytes);
    std::snprintf(out, 41, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3],
                  b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* 1 and the three numbers when `id` is "domain:bus:device.function" (domain of 4 or 8 hex digits). */
int parse_bus(const char* id, unsigned* domain, unsigned* bus, unsigned* slot)
{
    unsigned function = 0;
    int used = 0;
    const char* colon = std::strchr(id, ':');
    if (colon == nullptr || colon - id != 4) return 0;   /* 0000:1B:00.0 */
    if (std::sscanf(id, "%8x:%2x:%2x.%1x%n", domain, bus, slot, &function, &used) != 4) return 0;
    return id[used] == '\0' && std::strlen(id) == static_cast<std::size_t>(colon - id) + 8;
}

int bus_of(int device, unsigned* domain, unsigned* bus, unsigned* slot)
{
    int d = 0, b = 0, s = 0;
    if (cudaDeviceGetAttribute(&d, cudaDevAttrPciDomainId, device) != cudaSuccess) goto fail;
    if (cudaDeviceGetAttribute(&b, cudaDevAttrPciBusId, device) != cudaSuccess) goto fail;
    if (cudaDeviceGetAttribute(&s, cudaDevAttrPciDeviceId, device) != cudaSuccess) goto fail;
    *domain = static_cast<unsigned>(d);
    *bus = static_cast<unsigned>(b);
    *slot = static_cast<unsigned>(s);
    return 1;
fail:
    cudaGetLastError();
    return 0;
}

struct Job {
    int device;
    const std::function<void(int)>* work;
    cudaError_t status;
};

void* run_job(void* arg)
{
    Job* job = static_cast<Job*>(arg);
    job->status = cudaSetDevice(job->device);
    if (job->status != cudaSuccess) goto fail;
    (*job->work)(job->device);
    return nullptr;
fail:
    cudaGetLastError();
    return nullptr;
}

}  // namespace

int count_devices()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    return count;
}

std::vector<DeviceInfo> list_devices()
{
    std::vector<DeviceInfo> devices;
    int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        char bus_id[32];
        char uuid[41];
        DeviceInfo info;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) goto skip;
        if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, d) != cudaSuccess) goto skip;
        format_uuid(&prop.uuid, uuid);
        info.ordinal = d;
        info.name = prop.name;
        info.major = prop.major;
        info.minor = prop.minor;
        info.multiprocessors = prop.multiProcessorCount;
        info.total_memory = prop.totalGlobalMem;
        info.pci_bus_id = bus_id;
        info.uuid = uuid;
        devices.push_back(info);
        continue;
    skip:
        cudaGetLastError();
    }
    return devices;
}

int find_device(const std::string& id)
{
    unsigned want_domain = 0, want_bus = 0, want_slot = 0;
    const int by_bus = parse_bus(id.c_str(), &want_domain, &want_bus, &want_slot);
    int count = count_devices();
    for (int d = 0; d < count; ++d) {
        if (by_bus) {
            unsigned domain = 0, bus = 0, slot = 0;
            if (bus_of(d, &domain, &bus, &slot) && domain == want_domain && bus == want_bus && slot == want_slot) return d;
        } else {
            cudaDeviceProp prop;
            char uuid[41];
            if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            format_uuid(&prop.uuid, uuid);
            if (id.size() == 40 && strncasecmp(uuid, id.c_str(), 40) == 0) return d;
        }
    }
    return -1;
}

int pick_device(const Requirements& needs)
{
    int best = -1;
    std::size_t best_mem = 0;
    int best_sms = 0;
    unsigned long long best_pci = 0;   // domain, bus and device packed, so one comparison orders them
    int count = count_devices();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        unsigned domain = 0, bus = 0, slot = 0;
        unsigned long long pci;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) goto skip;
        if (!bus_of(d, &domain, &bus, &slot)) continue;
        if (prop.major < needs.min_major) continue;
        if (prop.major == needs.min_major && prop.minor < needs.min_minor) continue;
        if (prop.totalGlobalMem < needs.min_memory) continue;
        pci = (static_cast<unsigned long long>(domain) << 32) | (static_cast<unsigned long long>(bus) << 16) | slot;
        if (best < 0 || prop.totalGlobalMem > best_mem ||
            (prop.totalGlobalMem == best_mem &&
             (prop.multiProcessorCount > best_sms || (prop.multiProcessorCount == best_sms && pci < best_pci)))) {
            best = d;
            best_mem = prop.totalGlobalMem;
            best_sms = prop.multiProcessorCount;
            best_pci = pci;
        }
        continue;
    skip:
        cudaGetLastError();
    }
    return best;
}

DeviceScope::DeviceScope(int device)
{
    int caller = -1;
    status_ = cudaGetDevice(&caller);
    if (status_ != cudaSuccess) goto fail;
    status_ = cudaSetDevice(device);
    if (status_ != cudaSuccess) goto fail;
    previous_ = caller;
    return;
fail:
    cudaGetLastError();
    previous_ = -1;
}

DeviceScope::~DeviceScope()
{
    if (previous_ < 0) return;
    if (cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

cudaError_t for_each_device(const std::function<void(int device)>& work)
{
    cudaError_t result = cudaSuccess;
    int count = count_devices();
    int started = 0;
    Job* jobs = nullptr;
    pthread_t* threads = nullptr;
    if (count == 0) return cudaSuccess;
    jobs = static_cast<Job*>(std::calloc(static_cast<std::size_t>(count), sizeof(Job)));
    threads = static_cast<pthread_t*>(std::calloc(static_cast<std::size_t>(count), sizeof(pthread_t)));
    if (jobs == nullptr || threads == nullptr) {
        result = cudaErrorMemoryAllocation;
        goto cleanup;
    }
    for (started = 0; started < count; ++started) {
        jobs[started].device = started;
        jobs[started].work = &work;
        jobs[started].status = cudaSuccess;
        if (pthread_create(&threads[started], nullptr, run_job, &jobs[started]) != 0) {
            result = cudaErrorUnknown;
            break;
        }
    }
    for (int i = 0; i < started; ++i) pthread_join(threads[i], nullptr);
    for (int i = 0; i < started && result == cudaSuccess; ++i)
        if (jobs[i].status != cudaSuccess) result = jobs[i].status;
cleanup:
    std::free(threads);
    std::free(jobs);
    return result;
}
