#include "memory/device_heap.h"

#include <limits>

namespace mgpu::sim::mem::detail {

DeviceHeap::DeviceHeap(std::size_t capacity) : capacity_(capacity) {
    const std::size_t usable = capacity / kAllocationAlignment * kAllocationAlignment;
    if (usable > 0) free_.emplace(0, usable);
}

std::size_t DeviceHeap::footprint(std::size_t bytes) {
    if (bytes == 0) return kAllocationAlignment;
    if (bytes > std::numeric_limits<std::size_t>::max() - kAllocationAlignment) return 0;
    return (bytes + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

std::optional<std::size_t> DeviceHeap::take(std::size_t bytes) {
    const std::size_t needed = footprint(bytes);
    if (needed == 0 || needed > capacity_) return std::nullopt;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < needed) continue;
        const std::size_t offset = it->first;
        const std::size_t rest = it->second - needed;
        free_.erase(it);
        if (rest > 0) free_.emplace(offset + needed, rest);
        return offset;
    }
    return std::nullopt;
}

DeviceHeap::FreeSpan DeviceHeap::give_back(std::size_t offset, std::size_t bytes) {
    std::size_t begin = offset;
    std::size_t end = offset + footprint(bytes);
    auto next = free_.lower_bound(begin);
    if (next != free_.end() && next->first == end) {
        end += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto previous = std::prev(next);
        if (previous->first + previous->second == begin) {
            begin = previous->first;
            free_.erase(previous);
        }
    }
    free_.emplace(begin, end - begin);
    return {begin, end};
}

}  // namespace mgpu::sim::mem::detail
