// Devices: enumeration, properties, the current device, synchronisation and reset, versions.
#include "api_call.h"
#include "cuda_runtime_api.h"
#include "device_properties.h"
#include "memory/memory.h"
#include "scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;

namespace {
constexpr int kVersion = 13000;
}

cudaError_t cudaGetDeviceCount(int* count, Site site) {
    ApiCall call("cudaGetDeviceCount", site);
    if (count == nullptr) return call.done(cudaErrorInvalidValue);
    // 35 without a driver, 101 for a list the driver refuses, 100 with nothing visible: each
    // leaves the count unwritten, as measured.
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    *count = device_count();
    return call.done(cudaSuccess);
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device, Site site) {
    ApiCall call("cudaGetDeviceProperties", site);
    call.arg("device", device);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (!valid_device(device)) return call.done(cudaErrorInvalidDevice);
    if (device == runtime().options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    if (prop == nullptr) return call.done(cudaErrorInvalidValue);
    fill_properties(runtime().machine.devices[device], *prop);
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device, Site site) {
    ApiCall call("cudaDeviceGetAttribute", site);
    call.arg("attr", static_cast<long long>(attr)).arg("device", device);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (value == nullptr) return call.done(cudaErrorInvalidValue);
    if (!valid_device(device)) return call.done(cudaErrorInvalidDevice);
    if (device == runtime().options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    int answer = 0;
    if (!device_attribute(runtime().machine.devices[device], attr, answer)) return call.done(cudaErrorInvalidValue);
    *value = answer;
    return call.done(cudaSuccess);
}

cudaError_t cudaSetDevice(int device, Site site) {
    ApiCall call("cudaSetDevice", site);
    call.arg("device", device);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (!valid_device(device)) return call.done(cudaErrorInvalidDevice);
    if (device == runtime().options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    current_device() = device;   // no synchronisation, as documented
    ensure_context(device);      // since CUDA 12 cudaSetDevice initialises the primary context at once
    return call.done(cudaSuccess);
}

cudaError_t cudaGetDevice(int* device, Site site) {
    ApiCall call("cudaGetDevice", site);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (device == nullptr) return call.done(cudaErrorInvalidValue);
    *device = current_device();
    return call.done(cudaSuccess);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags, Site site) {
    ApiCall call("cudaSetDeviceFlags", site);
    call.arg("flags", flags);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    const unsigned schedule = flags & cudaDeviceScheduleMask;
    const bool one_schedule = schedule == 0 || schedule == cudaDeviceScheduleSpin ||
                              schedule == cudaDeviceScheduleYield || schedule == cudaDeviceScheduleBlockingSync;
    if ((flags & ~static_cast<unsigned>(cudaDeviceMask)) != 0 || !one_schedule)
        return call.done(cudaErrorInvalidValue);
    runtime().devices[device].flags = flags;
    return call.done(cudaSuccess);
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags, Site site) {
    ApiCall call("cudaGetDeviceFlags", site);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (flags == nullptr) return call.done(cudaErrorInvalidValue);
    // Mapped pinned memory is always on with unified addressing.
    *flags = runtime().devices[device].flags | cudaDeviceMapHost;
    return call.done(cudaSuccess);
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total, Site site) {
    ApiCall call("cudaMemGetInfo", site);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (free == nullptr || total == nullptr) return call.done(cudaErrorInvalidValue);
    const mgpu::sim::DeviceSpec& spec = runtime().machine.devices[device];
    const std::size_t used = mgpu::sim::mem::bytes_in_use(device);
    *free = used >= spec.free_mem ? 0 : spec.free_mem - used;
    *total = spec.total_mem;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize(Site site) {
    ApiCall call("cudaDeviceSynchronize", site, HostCost::Sync);
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    call.wait_until(run_device(device));
    return call.done(runtime().devices[device].sticky);
}

cudaError_t cudaDeviceReset(Site site) {
    ApiCall call("cudaDeviceReset", site);
    const int device = current_device();
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (device == runtime().options.faults.lost_device) return call.done(cudaErrorDevicesUnavailable);
    reset_device_context(device);
    return call.done(cudaSuccess);
}

cudaError_t cudaDriverGetVersion(int* driverVersion, Site site) {
    ApiCall call("cudaDriverGetVersion", site);
    if (driverVersion == nullptr) return call.done(cudaErrorInvalidValue);
    *driverVersion = runtime().machine.has_driver ? kVersion : 0;   // 0 means no driver is installed
    return call.done(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion, Site site) {
    ApiCall call("cudaRuntimeGetVersion", site);
    if (runtimeVersion == nullptr) return call.done(cudaErrorInvalidValue);
    *runtimeVersion = kVersion;
    return call.done(cudaSuccess);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority, Site site) {
    ApiCall call("cudaDeviceGetStreamPriorityRange", site);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (leastPriority) *leastPriority = kLeastStreamPriority;
    if (greatestPriority) *greatestPriority = kGreatestStreamPriority;
    return call.done(cudaSuccess);
}
