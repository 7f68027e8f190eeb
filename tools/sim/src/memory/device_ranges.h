// The address ranges reserved for the simulated devices, one per device.
//
// The fault handler reads them on any thread at any moment, so they live in a fixed array
// of atomics: lookups take no lock and allocate nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mgpu::sim::mem::detail {

// Device memory opens in chunks of this size; ranges start and end on chunk boundaries so
// a chunk never straddles two devices, and huge pages can back whole chunks.
constexpr std::size_t kChunkBytes = std::size_t{2} << 20;

// A device is one bit of run_guarded's 64-bit mask.
constexpr int kMaxDevices = 64;

struct DeviceRange {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;   // begin + capacity rounded up to kChunkBytes
};

// Unmaps the previous ranges and reserves new ones (PROT_NONE, nothing committed).
// Throws std::invalid_argument for more than kMaxDevices devices, std::bad_alloc when the
// address space cannot hold them.
void reserve_device_ranges(const std::vector<std::size_t>& capacities);

// Safe to call from a signal handler.
int device_range_count();
DeviceRange device_range(int device);
int device_at(std::uintptr_t address);   // -1 when the address is in no device's range

}  // namespace mgpu::sim::mem::detail
