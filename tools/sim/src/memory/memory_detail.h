// What the parts of the memory module share with each other and nobody else.
#pragma once

#include <cstdint>

#include "memory/memory.h"

namespace mgpu::sim::mem::detail {

// Puts the fault handler in place and gives the calling thread an alternate signal stack.
void prepare_guard_for_this_thread();

// Counters of the guard, zeroed by reset.
void reset_guard_statistics();

// The allocation containing `address` for the fault handler's last message: gives up
// rather than waits when another thread holds the table.
bool find_device_without_waiting(std::uintptr_t address, Allocation* found);

// Frees every host_alloc block and forgets every registration.
void reset_host_memory();

}  // namespace mgpu::sim::mem::detail
