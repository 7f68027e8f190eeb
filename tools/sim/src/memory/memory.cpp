// Device allocations: the table of live allocations and their placement in device ranges.
#include "memory/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "memory/device_heap.h"
#include "memory/device_ranges.h"
#include "memory/memory_detail.h"

namespace mgpu::sim::mem {
namespace {

struct DeviceState {
    detail::DeviceHeap heap;
    std::uintptr_t base = 0;
    std::size_t bytes_in_use = 0;
    std::size_t live = 0;
};

struct DeviceTable {
    std::mutex mutex;
    std::vector<DeviceState> devices;
    std::map<std::uintptr_t, Allocation> live;   // by base; allocations never overlap
    std::uint64_t next_serial = 1;
};

DeviceTable& table() {
    static DeviceTable instance;
    return instance;
}

const Allocation* containing(const std::map<std::uintptr_t, Allocation>& live, std::uintptr_t address) {
    auto it = live.upper_bound(address);
    if (it == live.begin()) return nullptr;
    --it;
    const Allocation& allocation = it->second;
    // A zero-byte allocation still owns its base address.
    const std::size_t extent = std::max<std::size_t>(allocation.size, 1);
    return address - allocation.base < extent ? &allocation : nullptr;
}

// Freed memory should stop costing RAM: drop the pages that lie wholly in free space and
// overlap what was just released (bounded by the released block, not the whole free span).
void drop_unused_pages(std::uintptr_t device_base, detail::DeviceHeap::FreeSpan free_span,
                       std::size_t released_offset, std::size_t released_bytes) {
    static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t lowest = (released_offset / page) * page;
    const std::size_t highest = (released_offset + released_bytes + page - 1) / page * page;
    const std::size_t begin = std::max((free_span.begin + page - 1) / page * page, lowest);
    const std::size_t end = std::min(free_span.end / page * page, highest);
    if (end > begin) madvise(reinterpret_cast<void*>(device_base + begin), end - begin, MADV_DONTNEED);
}

}  // namespace

void reset(const std::vector<std::size_t>& capacities) {
    DeviceTable& t = table();
    {
        std::lock_guard lock(t.mutex);
        t.live.clear();
        t.devices.clear();
        t.next_serial = 1;
        detail::reserve_device_ranges(capacities);
        t.devices.reserve(capacities.size());
        for (std::size_t d = 0; d < capacities.size(); ++d) {
            t.devices.push_back(DeviceState{detail::DeviceHeap(capacities[d]),
                                            detail::device_range(static_cast<int>(d)).begin, 0, 0});
        }
    }
    detail::reset_host_memory();
    detail::reset_guard_statistics();
    detail::prepare_guard_for_this_thread();
}

namespace {

void* place(DeviceTable& t, int device, std::size_t bytes, Site site, const char* symbol) {
    if (device < 0 || static_cast<std::size_t>(device) >= t.devices.size()) return nullptr;
    DeviceState& state = t.devices[static_cast<std::size_t>(device)];
    const std::optional<std::size_t> offset = state.heap.take(bytes);
    if (!offset) return nullptr;
    Allocation allocation{device, state.base + *offset, bytes, t.next_serial++, site, symbol};
    t.live.emplace(allocation.base, allocation);
    if (symbol == nullptr) {
        state.bytes_in_use += bytes;
        ++state.live;
    }
    return reinterpret_cast<void*>(allocation.base);
}

bool release(DeviceTable& t, void* p, bool symbol) {
    auto it = t.live.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == t.live.end() || (it->second.symbol != nullptr) != symbol) return false;
    const Allocation allocation = it->second;
    t.live.erase(it);
    DeviceState& state = t.devices[static_cast<std::size_t>(allocation.device)];
    const std::size_t offset = allocation.base - state.base;
    const detail::DeviceHeap::FreeSpan span = state.heap.give_back(offset, allocation.size);
    drop_unused_pages(state.base, span, offset, detail::DeviceHeap::footprint(allocation.size));
    if (!symbol) {
        state.bytes_in_use -= allocation.size;
        --state.live;
    }
    return true;
}

}  // namespace

void* device_alloc(int device, std::size_t bytes, Site site) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    return place(t, device, bytes, site, nullptr);
}

bool device_free(void* p) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    return release(t, p, false);
}

void* symbol_alloc(int device, std::size_t bytes, const char* name, Site declared) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    return place(t, device, bytes, declared, name);
}

bool symbol_free(void* p) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    return release(t, p, true);
}

std::optional<Allocation> find_device(const void* p) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    const Allocation* found = containing(t.live, reinterpret_cast<std::uintptr_t>(p));
    if (found == nullptr) return std::nullopt;
    return *found;
}

int device_of(const void* p) { return detail::device_at(reinterpret_cast<std::uintptr_t>(p)); }

std::size_t bytes_in_use(int device) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    if (device < 0 || static_cast<std::size_t>(device) >= t.devices.size()) return 0;
    return t.devices[static_cast<std::size_t>(device)].bytes_in_use;
}

std::size_t live_allocations(int device) {
    DeviceTable& t = table();
    std::lock_guard lock(t.mutex);
    if (device < 0 || static_cast<std::size_t>(device) >= t.devices.size()) return 0;
    return t.devices[static_cast<std::size_t>(device)].live;
}

std::vector<Allocation> allocations() {
    DeviceTable& t = table();
    std::vector<Allocation> result;
    {
        std::lock_guard lock(t.mutex);
        result.reserve(t.live.size());
        for (const auto& [base, allocation] : t.live)
            if (allocation.symbol == nullptr) result.push_back(allocation);
    }
    std::sort(result.begin(), result.end(),
              [](const Allocation& a, const Allocation& b) { return a.serial < b.serial; });
    return result;
}

namespace detail {

bool find_device_without_waiting(std::uintptr_t address, Allocation* found) {
    DeviceTable& t = table();
    // Another thread may be between lock and unlock for a moment; a thread that never lets
    // go must not keep the dying process from saying why it dies.
    for (int attempt = 0; attempt < 100000; ++attempt) {
        if (!t.mutex.try_lock()) continue;
        const Allocation* allocation = containing(t.live, address);
        if (allocation != nullptr) *found = *allocation;
        t.mutex.unlock();
        return allocation != nullptr;
    }
    return false;
}

}  // namespace detail
}  // namespace mgpu::sim::mem
