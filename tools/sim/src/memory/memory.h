// Simulated device memory: one reserved address range per device (mmap PROT_NONE |
// MAP_NORESERVE, so only touched pages cost RAM), an allocation table, page-locked host
// memory, and the guard that keeps host code out of device memory.
//
// Device memory is inaccessible (PROT_NONE) except while a guarded body runs: the runtime's
// own copies run with every device open, a kernel on device d with d and the devices d has
// peer access to. A touch outside that set ends the body early with a Violation; a touch
// from plain host code prints which allocation was dereferenced and ends the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mgpu/sim/site.h"

namespace mgpu::sim::mem {

struct Allocation {
    int device = -1;
    std::uintptr_t base = 0;
    std::size_t size = 0;
    std::uint64_t serial = 0;     // 1, 2, ... in allocation order since reset
    Site site;                    // where cudaMalloc was called, or where the variable was declared
    const char* symbol = nullptr; // a device's copy of this __device__ / __constant__ variable
};

struct HostRange {
    std::uintptr_t base = 0;
    std::size_t size = 0;
    bool allocated_by_runtime = false;   // cudaMallocHost / cudaHostAlloc (false: cudaHostRegister)
    unsigned flags = 0;
};

// Drops every allocation and reserves one range per device of the given capacities.
void reset(const std::vector<std::size_t>& capacities);

// nullptr when the device has not `bytes` left. Zero bytes are the caller's business.
void* device_alloc(int device, std::size_t bytes, Site site);
// false when p is not the base of a live device allocation.
bool device_free(void* p);

// A device's copy of a __device__ or __constant__ variable: placed in the device's memory like
// an allocation, but loaded with the program rather than allocated by it, so it is in no count
// of the program's allocations (allocations(), live_allocations, bytes_in_use) and device_free
// refuses it.
void* symbol_alloc(int device, std::size_t bytes, const char* name, Site declared);
bool symbol_free(void* p);

std::optional<Allocation> find_device(const void* p);   // the allocation containing p
int device_of(const void* p);                             // owner of the reserved range, -1 if none
std::size_t bytes_in_use(int device);
std::size_t live_allocations(int device);
std::vector<Allocation> allocations();                    // every live one, by serial (no symbols)

// HostRange::flags bit of managed memory (cudaMallocManaged), which lives in host memory that every
// device's kernels may reach, like page-locked memory.
inline constexpr unsigned kManagedMemory = 0x80000000u;
void* host_alloc(std::size_t bytes, unsigned flags);      // page-locked (modelled) host memory
bool host_free(void* p);                                  // false when p was not from host_alloc
bool host_register(void* p, std::size_t bytes, unsigned flags);   // false when it overlaps one
bool host_unregister(void* p);                            // false when p was not registered
std::optional<HostRange> find_host(const void* p);        // the pinned range containing p
std::size_t live_host_allocations();                     // page-locked, not managed
std::vector<HostRange> host_ranges();                     // every live one, by address

struct Violation {
    const void* address = nullptr;
    int owner_device = -1;                                // device the address belongs to; -1: no device's
                                                          // (a null, wild or freed host pointer)
    std::optional<Allocation> allocation;                 // the allocation it falls in, if any
    bool write = false;
};

// Runs body with the devices in `open_devices` (bit d = device d) accessible from this thread.
// Returns false, with *violation filled, if body touched memory of another device (the body is
// abandoned at that point, as a faulting kernel is).
// Any other bad access inside body (a null or unmapped address) ends it the same way, with
// owner_device -1, as it would end a GPU kernel. The abandoned body's stack frames are not
// unwound: destructors between body and the faulting access do not run, and a Boost.Context
// fiber that was running is abandoned with its stack (free such stacks yourself, or reuse
// them from a pool). Exceptions thrown by body propagate after the guard has closed everything.
bool run_guarded(std::uint64_t open_devices, const std::function<void()>& body, Violation* violation);

// Puts the guard's SIGSEGV handler back in front when other code (a test framework's crash
// handler) replaced it; the replaced handler keeps every fault outside device memory.
// reset and run_guarded call it; harnesses may call it after installing their own handlers.
void install_fault_handler();

// How many times guarded bodies faulted to open device memory since reset (a sweep over
// N bytes in address order costs about log2(N / 2 MiB) + 1).
std::uint64_t guard_openings();

constexpr std::uint64_t kAllDevices = ~std::uint64_t{0};

}  // namespace mgpu::sim::mem
