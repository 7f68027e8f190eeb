// Lesson 3, peer-to-peer memory access: the functions you write in peer_access.cu.
// The checker calls each of them on several simulated machines; do not change this file.
#pragma once

#include <cstddef>
#include <cuda_runtime.h>

// Task 1 (each task is numbered the same way in peer_access.cu). Whether kernels on device `from` may be given access to memory on
// device `to`. False for the same device and for ids that are not devices; leaves no error behind.
bool can_reach(int from, int to);

// Task 2. Opens access in one direction only: kernels on `from` may then read and write memory on `to`.
// Makes `from` current for the call and restores the caller's current device before returning.
// Already open is not a failure (returns cudaSuccess and leaves no error behind). When the pair cannot
// peer, returns cudaErrorPeerAccessUnsupported without asking the runtime to enable anything.
cudaError_t open_peer_access(int from, int to);

// Task 3. Opens every direction that can peer on this machine, each with open_peer_access.
// Returns how many directions are open afterwards.
int open_all_peer_access();

// Task 4. Copies `bytes` from `src` on device `src_device` to `dst` on device `dst_device`.
// Correct whether or not the two devices can peer; returns when the copy is complete.
cudaError_t copy_between_devices(void* dst, int dst_device, const void* src, int src_device, std::size_t bytes);

// Task 5. dst[i] = factor * src[i] for i < n, computed by a kernel on `dst_device` that reads `src`
// (on `src_device`) through peer access when the pair can peer, and from a local copy when it cannot.
// Returns when dst is complete.
cudaError_t scale_from_peer(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            float factor);

// Task 6. The same result as scale_from_peer, pipelined: the input moves to `dst_device` in chunks of
// `chunk` elements with cudaMemcpyPeerAsync on one stream, while a kernel on a second stream scales the
// chunk that arrived before it; events order each kernel after its chunk's copy. Returns when dst is complete.
cudaError_t pipelined_scale(float* dst, int dst_device, const float* src, int src_device, std::size_t n,
                            std::size_t chunk, float factor);

// Task 7. Closes every direction opened by open_peer_access and open_all_peer_access; a direction that
// was already open when they asked (cudaErrorPeerAccessAlreadyEnabled, other code's) stays open.
// Returns how many directions were closed. Leaves no error behind and restores the current device.
int close_all_peer_access();
