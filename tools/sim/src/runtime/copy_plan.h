// How one copy or memset is queued: which engine moves the bytes, how long it takes in the
// model, whether the host waits for it, and the work that moves them when it executes.
#pragma once

#include <cstddef>

#include "runtime_state.h"
#include "scheduler.h"

namespace mgpu::sim::rt {

// One end of a copy: a device (its allocation must hold the whole range) or host memory.
struct CopyEnd {
    int device = -1;        // -1: host memory
    bool pinned = false;    // host memory that is page-locked over the whole range
};

// Where a pointer range lives. Returns false when it starts in device memory but does not fit
// in one live allocation (a copy through freed memory or past the end of a buffer).
bool locate(const void* p, std::size_t count, CopyEnd& end);

// The rows of a pitched (2D) copy or memset: `rows` runs of `count` bytes, each `pitch` bytes after
// the one before. One row is a plain linear copy.
struct Rows {
    std::size_t rows = 1;
    std::size_t src_pitch = 0;
    std::size_t dst_pitch = 0;

    // Bytes from the first row's start to the last row's end, at a pitch.
    static std::size_t span(std::size_t count, std::size_t rows, std::size_t pitch) {
        return rows == 0 ? 0 : (rows - 1) * pitch + count;
    }
};

struct CopySpec {
    const char* api_name = "";
    void* dst = nullptr;
    const void* src = nullptr;
    std::size_t count = 0;   // bytes per row
    Rows shape;
    CopyEnd from, to;
    CUstream_st* stream = nullptr;
    bool serialise_devices = false;   // cudaMemcpyPeer / cross-device cudaMemcpy: waits for all work
    bool snapshot_source = false;     // pageable source staged at the call
    // A small pageable host-to-device copy: the host copies the bytes into a pinned staging buffer,
    // then the engine moves them at the pinned speed (on an H200, 1 MiB took about the staging time
    // plus a pinned copy, not 1 MiB at the pageable speed of large copies).
    bool staged_in_pinned_buffer = false;
};

Enqueued enqueue_copy(const CopySpec& spec);

// Memsets of up to a page take the copy engine's short path (measured on an H200: 1.6 us on the
// device and 0.8-1.3 us of host time at 4 KiB); larger ones run as a kernel and cost about what a
// launch does.
inline constexpr std::size_t kPageMemsetLimit = 4096;

// Memset of `count` bytes at p, on `device` (-1: page-locked host memory).
Enqueued enqueue_memset(const char* api_name, void* p, int value, std::size_t count, int device,
                        CUstream_st* stream, Rows shape = {});

class ApiCall;

// A cudaMemcpy* call of any shape (count bytes per row) and the way it is made.
struct MemcpyRequest {
    const char* name = "";
    void* dst = nullptr;
    const void* src = nullptr;
    std::size_t count = 0;
    Rows shape;
    cudaMemcpyKind kind = cudaMemcpyDefault;
    cudaStream_t stream = nullptr;
    bool async = false;
    bool per_thread_default = false;
};

struct MemsetRequest {
    const char* name = "";
    void* p = nullptr;
    int value = 0;
    std::size_t count = 0;
    Rows shape;
    cudaStream_t stream = nullptr;
    bool async = false;
    bool per_thread_default = false;
};

// Validates, queues and waits as the real call does (the "Streams and synchronisation" rows of
// cuda-facts.md); the ApiCall holds the call's own arguments.
cudaError_t queue_memcpy(ApiCall& call, const MemcpyRequest& request);
// The same for a call that recorded its own arguments (kind and stream included) before checks of
// its own, as cudaMemcpyToSymbol does: everything from the current device's checks on.
cudaError_t finish_memcpy(ApiCall& call, const MemcpyRequest& request);
// "cudaMemcpyHostToDevice", ..., or "invalid".
const char* memcpy_kind_name(int kind);
cudaError_t queue_memset(ApiCall& call, const MemsetRequest& request);

// Whether peer copies between the two devices go over the direct link (access enabled in
// either direction) rather than through host memory.
bool direct_peer_path(int src, int dst);

}  // namespace mgpu::sim::rt
