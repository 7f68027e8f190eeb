// The state a guarded body leaves for the fault handler on its own thread: which devices it
// may touch, the chunks of device memory opened for it so far, and where to go back to when
// it touches a device it may not.
//
// The handler writes here while the body is stopped mid-instruction, so everything is
// fixed-size and allocated before the body starts.
#pragma once

#include <csetjmp>
#include <cstddef>
#include <cstdint>

namespace mgpu::sim::mem::detail {

// Enough for any sequential sweep (adjacent chunks merge into one span); a body that
// scatters over more places than this gets whole devices opened instead.
constexpr std::size_t kOpenSpanCapacity = 1024;

struct OpenSpan {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    int device = -1;
};

struct FaultRecord {
    std::uintptr_t address = 0;
    int owner_device = -1;
    bool write = false;
};

struct ThreadGuard {
    // Written and read on one thread, across a signal: volatile keeps the compiler honest.
    volatile bool active = false;
    std::uint64_t open_devices = 0;
    sigjmp_buf* way_back = nullptr;
    FaultRecord fault;
    OpenSpan spans[kOpenSpanCapacity];
    std::size_t span_count = 0;
    std::uint64_t wholly_open_devices = 0;
};

// This thread's guard, or nullptr when it never ran a guarded body. Plain TLS so the handler
// can read it without calling into the C++ runtime.
ThreadGuard* this_thread_guard();

// Called by the handler for a permitted touch. False when memory could not be opened.
bool open_memory_around(ThreadGuard& guard, int device, std::uintptr_t address);

// Number of times the handler opened device memory since reset.
void count_opening();

}  // namespace mgpu::sim::mem::detail
