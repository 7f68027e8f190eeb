// Page-locked host memory as the runtime models it: blocks from cudaMallocHost /
// cudaHostAlloc, and ranges the program registered with cudaHostRegister.
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "memory/memory.h"
#include "memory/memory_detail.h"

namespace mgpu::sim::mem {
namespace {

struct HostTable {
    std::mutex mutex;
    std::map<std::uintptr_t, HostRange> ranges;   // by base; never overlapping
};

HostTable& host_table() {
    static HostTable instance;
    return instance;
}

std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

std::size_t mapped_bytes(std::size_t bytes) {
    const std::size_t page = page_size();
    return bytes == 0 ? page : (bytes + page - 1) / page * page;
}

// A zero-byte range still owns its base address.
std::uintptr_t range_end(const HostRange& range) { return range.base + (range.size == 0 ? 1 : range.size); }

bool overlaps_any(const std::map<std::uintptr_t, HostRange>& ranges, std::uintptr_t begin, std::uintptr_t end) {
    auto it = ranges.lower_bound(begin);
    if (it != ranges.end() && it->first < end) return true;
    if (it != ranges.begin() && range_end(std::prev(it)->second) > begin) return true;
    return false;
}

}  // namespace

void* host_alloc(std::size_t bytes, unsigned flags) {
    if (bytes > SIZE_MAX - page_size()) return nullptr;
    void* p = mmap(nullptr, mapped_bytes(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    // Page-locked buffers are the large ones (whole inputs): huge pages make touching them cheap.
    madvise(p, mapped_bytes(bytes), MADV_HUGEPAGE);
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    t.ranges[base] = HostRange{base, bytes, true, flags};
    return p;
}

bool host_free(void* p) {
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    auto it = t.ranges.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == t.ranges.end() || !it->second.allocated_by_runtime) return false;
    munmap(p, mapped_bytes(it->second.size));
    t.ranges.erase(it);
    return true;
}

bool host_register(void* p, std::size_t bytes, unsigned flags) {
    const auto base = reinterpret_cast<std::uintptr_t>(p);
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    const std::uintptr_t end = base + (bytes == 0 ? 1 : bytes);
    if (end < base || overlaps_any(t.ranges, base, end)) return false;
    t.ranges[base] = HostRange{base, bytes, false, flags};
    return true;
}

bool host_unregister(void* p) {
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    auto it = t.ranges.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == t.ranges.end() || it->second.allocated_by_runtime) return false;
    t.ranges.erase(it);
    return true;
}

std::optional<HostRange> find_host(const void* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    auto it = t.ranges.upper_bound(address);
    if (it == t.ranges.begin()) return std::nullopt;
    --it;
    if (address >= range_end(it->second)) return std::nullopt;
    return it->second;
}

std::size_t live_host_allocations() {
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    std::size_t count = 0;
    for (const auto& [base, range] : t.ranges)
        count += range.allocated_by_runtime && (range.flags & kManagedMemory) == 0 ? 1 : 0;
    return count;
}

std::vector<HostRange> host_ranges() {
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    std::vector<HostRange> ranges;
    for (const auto& [base, range] : t.ranges) ranges.push_back(range);
    return ranges;
}

namespace detail {

void reset_host_memory() {
    HostTable& t = host_table();
    std::lock_guard lock(t.mutex);
    for (const auto& [base, range] : t.ranges) {
        if (range.allocated_by_runtime) munmap(reinterpret_cast<void*>(base), mapped_bytes(range.size));
    }
    t.ranges.clear();
}

}  // namespace detail
}  // namespace mgpu::sim::mem
