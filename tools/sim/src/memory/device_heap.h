// Placement of allocations inside one device's range: first fit over a free list kept in
// address order, neighbours merged on release. Works on offsets; knows nothing of pages.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace mgpu::sim::mem::detail {

// cudaMalloc returns pointers aligned to at least 256 bytes.
constexpr std::size_t kAllocationAlignment = 256;

class DeviceHeap {
public:
    explicit DeviceHeap(std::size_t capacity);

    // Bytes an allocation of `bytes` occupies (a zero-byte one still gets its own address).
    static std::size_t footprint(std::size_t bytes);

    // Offset of a new block of footprint(bytes), or nothing when no free block is that large.
    std::optional<std::size_t> take(std::size_t bytes);

    // The free block [begin, end) that now contains the released bytes, merged with its
    // free neighbours: the caller may drop every whole page inside it.
    struct FreeSpan {
        std::size_t begin = 0;
        std::size_t end = 0;
    };
    FreeSpan give_back(std::size_t offset, std::size_t bytes);

    std::size_t capacity() const { return capacity_; }
    std::size_t free_blocks() const { return free_.size(); }

private:
    std::size_t capacity_;
    std::map<std::size_t, std::size_t> free_;   // offset -> length, disjoint, never adjacent
};

}  // namespace mgpu::sim::mem::detail
