// Device and page-locked host allocations, host registration and pointer attributes.
#include "api_call.h"
#include "device_allocation.h"
#include "cuda_runtime_api.h"
#include "memory/memory.h"
#include "scheduler.h"

using mgpu::sim::Site;
using namespace mgpu::sim::rt;
namespace mem = mgpu::sim::mem;

namespace {

constexpr unsigned kHostAllocFlags = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
constexpr unsigned kHostRegisterFlags =
    cudaHostRegisterPortable | cudaHostRegisterMapped | cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;

// Freeing waits for the device work that might still use the memory, as cudaFree does.
void finish_work_before_free(ApiCall& call, int device) {
    run_all();
    if (valid_device(device)) call.wait_until(run_device(device));
}

// The host time the driver spends mapping, unmapping, pinning or unpinning `size` bytes.
double allocation_us(double fixed_us, double us_per_gib, std::size_t size) {
    return fixed_us + us_per_gib * static_cast<double>(size) / double(1ull << 30);
}

cudaError_t allocate_host(ApiCall& call, void** ptr, size_t size, unsigned int flags) {
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (ptr == nullptr || (flags & ~kHostAllocFlags) != 0) return call.done(cudaErrorInvalidValue);
    if (size == 0) {
        *ptr = nullptr;
        return call.done(cudaSuccess);
    }
    void* p = mem::host_alloc(size, flags);
    *ptr = p;
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    call.wait_until(call.begin_us() + allocation_us(cost.pin_alloc_us, cost.pin_alloc_us_per_gib, size));
    call.set_output(hex_pointer(p));
    return call.done(p ? cudaSuccess : cudaErrorMemoryAllocation);
}

}  // namespace

namespace mgpu::sim::rt {

cudaError_t allocate_device(ApiCall& call, void** devPtr, size_t size) {
    const Site site = call.site();
    const int device = current_device();
    if (cudaError_t status = context_status(device); status != cudaSuccess) return call.done(status);
    if (devPtr == nullptr) return call.done(cudaErrorInvalidValue);
    Runtime& r = runtime();
    ++r.malloc_calls;
    if (r.options.faults.malloc_fails_at == r.malloc_calls) {
        *devPtr = nullptr;
        return call.done(cudaErrorMemoryAllocation);
    }
    if (size == 0) {
        *devPtr = nullptr;
        return call.done(cudaSuccess);
    }
    void* p = mem::device_alloc(device, size, site);
    *devPtr = p;
    const mgpu::sim::CostModel& cost = r.machine.cost;
    call.wait_until(call.begin_us() + allocation_us(cost.malloc_us, cost.malloc_us_per_gib, size));
    call.set_output(hex_pointer(p));
    return call.done(p ? cudaSuccess : cudaErrorMemoryAllocation);
}

}  // namespace mgpu::sim::rt

cudaError_t cudaMalloc(void** devPtr, size_t size, Site site) {
    ApiCall call("cudaMalloc", site);
    call.arg("size", static_cast<long long>(size));
    return allocate_device(call, devPtr, size);
}

cudaError_t cudaFree(void* devPtr, Site site) {
    ApiCall call("cudaFree", site);
    call.arg("devPtr", devPtr);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (devPtr == nullptr) return call.done(cudaSuccess);
    if (auto managed = mem::find_host(devPtr); managed && (managed->flags & mem::kManagedMemory) != 0) {
        if (managed->base != reinterpret_cast<std::uintptr_t>(devPtr)) return call.done(cudaErrorInvalidValue);
        finish_work_before_free(call, current_device());
        return call.done(mem::host_free(devPtr) ? cudaSuccess : cudaErrorInvalidValue);
    }
    auto allocation = mem::find_device(devPtr);
    if (!allocation || allocation->base != reinterpret_cast<std::uintptr_t>(devPtr))
        return call.done(cudaErrorInvalidValue);
    finish_work_before_free(call, allocation->device);
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    call.wait_until(host_clock() + allocation_us(cost.free_us, cost.free_us_per_gib, allocation->size));
    return call.done(mem::device_free(devPtr) ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaMallocHost(void** ptr, size_t size, Site site) {
    ApiCall call("cudaMallocHost", site);
    call.arg("size", static_cast<long long>(size));
    return allocate_host(call, ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags, Site site) {
    ApiCall call("cudaHostAlloc", site);
    call.arg("size", static_cast<long long>(size)).arg("flags", flags);
    return allocate_host(call, pHost, size, flags);
}

cudaError_t cudaFreeHost(void* ptr, Site site) {
    ApiCall call("cudaFreeHost", site);
    call.arg("ptr", ptr);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (ptr == nullptr) return call.done(cudaSuccess);
    auto range = mem::find_host(ptr);
    if (!range || !range->allocated_by_runtime || (range->flags & mem::kManagedMemory) != 0 ||
        range->base != reinterpret_cast<std::uintptr_t>(ptr))
        return call.done(cudaErrorInvalidValue);
    finish_work_before_free(call, current_device());
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    call.wait_until(host_clock() + allocation_us(cost.pin_free_us, cost.pin_free_us_per_gib, range->size));
    return call.done(mem::host_free(ptr) ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags, Site site) {
    ApiCall call("cudaHostRegister", site);
    call.arg("ptr", ptr).arg("size", static_cast<long long>(size)).arg("flags", flags);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (ptr == nullptr || size == 0 || (flags & ~kHostRegisterFlags) != 0 || mem::device_of(ptr) >= 0)
        return call.done(cudaErrorInvalidValue);
    if (!mem::host_register(ptr, size, flags)) return call.done(cudaErrorHostMemoryAlreadyRegistered);
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    call.wait_until(call.begin_us() + allocation_us(cost.register_us, cost.register_us_per_gib, size));
    return call.done(cudaSuccess);
}

cudaError_t cudaHostUnregister(void* ptr, Site site) {
    ApiCall call("cudaHostUnregister", site);
    call.arg("ptr", ptr);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (ptr == nullptr) return call.done(cudaErrorInvalidValue);
    auto range = mem::find_host(ptr);
    if (!range || range->allocated_by_runtime || range->base != reinterpret_cast<std::uintptr_t>(ptr))
        return call.done(cudaErrorHostMemoryNotRegistered);
    run_all();   // copies still queued may read the range
    const mgpu::sim::CostModel& cost = runtime().machine.cost;
    call.wait_until(host_clock() + allocation_us(cost.unregister_us, cost.unregister_us_per_gib, range->size));
    return call.done(mem::host_unregister(ptr) ? cudaSuccess : cudaErrorHostMemoryNotRegistered);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr, Site site) {
    ApiCall call("cudaPointerGetAttributes", site);
    call.arg("ptr", ptr);
    if (cudaError_t status = machine_status(); status != cudaSuccess) return call.done(status);
    if (attributes == nullptr) return call.done(cudaErrorInvalidValue);
    *attributes = cudaPointerAttributes{};
    if (auto allocation = mem::find_device(ptr)) {
        attributes->type = cudaMemoryTypeDevice;
        attributes->device = allocation->device;
        attributes->devicePointer = const_cast<void*>(ptr);
        attributes->hostPointer = nullptr;
    } else if (auto managed = mem::find_host(ptr); managed && (managed->flags & mem::kManagedMemory) != 0) {
        attributes->type = cudaMemoryTypeManaged;
        attributes->device = current_device();
        attributes->devicePointer = const_cast<void*>(ptr);
        attributes->hostPointer = const_cast<void*>(ptr);
    } else if (ptr != nullptr && mem::find_host(ptr)) {
        // Page-locked memory is mapped at the same address for every device (unified addressing).
        attributes->type = cudaMemoryTypeHost;
        attributes->device = current_device();
        attributes->devicePointer = const_cast<void*>(ptr);
        attributes->hostPointer = const_cast<void*>(ptr);
    } else {
        attributes->type = cudaMemoryTypeUnregistered;
        attributes->device = cudaInvalidDeviceId;
    }
    return call.done(cudaSuccess);
}

cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags, Site site) {
    ApiCall call("cudaHostGetDevicePointer", site);
    call.arg("pHost", pHost).arg("flags", flags);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (pDevice == nullptr || flags != 0) return call.done(cudaErrorInvalidValue);
    auto range = mem::find_host(pHost);
    if (!range || (range->flags & mem::kManagedMemory) != 0) return call.done(cudaErrorInvalidValue);
    // Page-locked memory is mapped for every device at its host address (unified addressing).
    *pDevice = pHost;
    return call.done(cudaSuccess);
}

cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost, Site site) {
    ApiCall call("cudaHostGetFlags", site);
    call.arg("pHost", pHost);
    if (cudaError_t status = context_status(current_device()); status != cudaSuccess) return call.done(status);
    if (pFlags == nullptr) return call.done(cudaErrorInvalidValue);
    auto range = mem::find_host(pHost);
    if (!range || !range->allocated_by_runtime || (range->flags & mem::kManagedMemory) != 0)
        return call.done(cudaErrorInvalidValue);
    // With unified addressing every page-locked allocation is mapped, as if cudaHostAllocMapped were given.
    *pFlags = range->flags | cudaHostAllocMapped;
    return call.done(cudaSuccess);
}
