// A kernel held because it may poll a host flag (Runtime::held_kernels) may instead be one that
// signals the host through that memory, while the host spins on it without calling the runtime.
// Nothing would then release it, so a watcher thread does: when no runtime call has been made
// for kQuietMs of real time while a kernel is held, the kernel runs as a kernel that never waited.
#pragma once

namespace mgpu::sim::rt {

inline constexpr int kHeldKernelQuietMs = 200;

// Starts the watcher of this process if it is not running (called when a kernel is held).
void watch_held_kernels();

}  // namespace mgpu::sim::rt
