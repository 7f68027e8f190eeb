#include "memory/device_ranges.h"

#include <sys/mman.h>

#include <atomic>
#include <new>
#include <stdexcept>
#include <string>

namespace mgpu::sim::mem::detail {
namespace {

std::atomic<int> published_count{0};
std::atomic<std::uintptr_t> range_begin[kMaxDevices];
std::atomic<std::uintptr_t> range_end[kMaxDevices];

std::size_t round_up_to_chunk(std::size_t bytes) {
    return (bytes + kChunkBytes - 1) / kChunkBytes * kChunkBytes;
}

// Over-reserves by one chunk and trims, so the range starts on a chunk boundary.
std::uintptr_t reserve_aligned(std::size_t bytes) {
    const std::size_t padded = bytes + kChunkBytes;
    void* raw = mmap(nullptr, padded, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto raw_begin = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t begin = (raw_begin + kChunkBytes - 1) / kChunkBytes * kChunkBytes;
    if (begin > raw_begin) munmap(raw, begin - raw_begin);
    const std::uintptr_t tail = begin + bytes;
    if (raw_begin + padded > tail) munmap(reinterpret_cast<void*>(tail), raw_begin + padded - tail);
    // With a huge page behind each touched chunk, opening and closing a chunk changes one page
    // table entry instead of 512. Where transparent huge pages are off this asks for nothing.
    madvise(reinterpret_cast<void*>(begin), bytes, MADV_HUGEPAGE);
    return begin;
}

}  // namespace

void reserve_device_ranges(const std::vector<std::size_t>& capacities) {
    if (capacities.size() > static_cast<std::size_t>(kMaxDevices)) {
        throw std::invalid_argument("the simulator supports at most " + std::to_string(kMaxDevices) +
                                    " devices, the machine asks for " + std::to_string(capacities.size()));
    }
    // Unpublish first, so a concurrent lookup never sees a range that is being unmapped.
    const int previous = published_count.exchange(0);
    for (int d = 0; d < previous; ++d) {
        const std::uintptr_t begin = range_begin[d].load();
        const std::uintptr_t end = range_end[d].load();
        if (end > begin) munmap(reinterpret_cast<void*>(begin), end - begin);
        range_begin[d].store(0);
        range_end[d].store(0);
    }
    int reserved = 0;
    try {
        for (std::size_t capacity : capacities) {
            const std::size_t bytes = round_up_to_chunk(capacity);
            const std::uintptr_t begin = bytes == 0 ? 0 : reserve_aligned(bytes);
            range_begin[reserved].store(begin);
            range_end[reserved].store(begin + bytes);
            ++reserved;
        }
    } catch (...) {
        for (int d = 0; d < reserved; ++d) {
            const std::uintptr_t begin = range_begin[d].load();
            const std::uintptr_t end = range_end[d].load();
            if (end > begin) munmap(reinterpret_cast<void*>(begin), end - begin);
            range_begin[d].store(0);
            range_end[d].store(0);
        }
        throw;
    }
    published_count.store(reserved);
}

int device_range_count() { return published_count.load(std::memory_order_acquire); }

DeviceRange device_range(int device) {
    if (device < 0 || device >= device_range_count()) return {};
    return {range_begin[device].load(std::memory_order_relaxed), range_end[device].load(std::memory_order_relaxed)};
}

int device_at(std::uintptr_t address) {
    const int count = device_range_count();
    for (int d = 0; d < count; ++d) {
        if (address >= range_begin[d].load(std::memory_order_relaxed) &&
            address < range_end[d].load(std::memory_order_relaxed)) {
            return d;
        }
    }
    return -1;
}

}  // namespace mgpu::sim::mem::detail
