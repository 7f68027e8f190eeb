// Device work: every copy, memset, kernel and marker is queued on a stream with the
// operations it must follow, given a modelled start and end at enqueue time, and executed
// when the schedule says so (eager: at once; lazy and shuffle: only when the host needs it).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime_state.h"

namespace mgpu::sim::rt {

struct OpRequest {
    mgpu::trace::OpKind kind = mgpu::trace::OpKind::Kernel;
    std::string name;
    CUstream_st* stream = nullptr;
    int device = -1;                  // whose engine runs it (trace)
    int src_device = -1;
    int dst_device = -1;
    std::string engine;               // "" for markers, which take no time
    int engine_device = -1;           // -1 for engines shared by a pair (links, staging)
    double duration_us = 0;
    // Part of duration_us during which the op keeps its device's memory busy (memory-bound
    // copies, memsets and kernels); concurrent ones on one device share it (memory_timeline.h).
    int memory_device = -1;
    double memory_us = 0;
    double not_before_us = -1;        // earliest start when not the host's time now (launches)
    // The start settled by the caller (each device's part of one NCCL operation starts when the
    // last device is ready); -1: computed here from the dependencies and the engine.
    double start_at_us = -1;
    // Shared host links the bytes cross (machine().shared_host_links index, and 0 towards the
    // device or 1 towards the host): concurrent copies on one link and direction share its speed.
    std::vector<std::pair<int, int>> host_links;
    std::size_t bytes = 0;
    bool pinned_host = false;
    bool staged = false;
    bool peer_access = false;
    unsigned long long threads = 0;
    std::vector<std::uint64_t> extra_deps;   // cudaStreamWaitEvent
    std::vector<int> barrier_devices;        // serialise with all work on these devices (cudaMemcpyPeer)
    std::vector<mgpu::trace::MemoryRange> touches;   // what it reads and writes (races in the trace)
    std::function<void()> work;
    // Non-empty: the operation never finishes on its own (duration_us should be kNeverUs) until
    // release_stuck; the text says what it is, for diagnoses.
    std::string stuck;
};

struct Enqueued {
    std::uint64_t id = 0;
    double end_us = 0;
};

Enqueued enqueue(OpRequest&& request);

// The operations a new operation queued on `stream` would follow: stream order, the legacy
// default stream's barrier and cudaMemcpyPeer's device-wide serialisation.
std::vector<std::uint64_t> stream_dependencies(CUstream_st* stream);

// Executes the given operations and everything they depend on, in the schedule's order. A host
// that waits for them (not the eager schedule running what was just queued) releases the held
// kernels among them.
void run_until_done(const std::vector<std::uint64_t>& ops, bool host_waits = true);
// Executes every pending operation queued on a stream of the device (cudaDeviceSynchronize).
// Returns the latest modelled end among the device's operations so far.
double run_device(int device);
// Executes everything; returns the latest modelled end of any operation.
double run_all();

bool is_done(std::uint64_t op);
double op_end_us(std::uint64_t op);   // 0 for op 0

// The operation being executed right now (for kernels that fault), 0 outside execution.
std::uint64_t executing_op();
void mark_op_error(std::uint64_t op, int code);

// Ends a stuck operation (an NCCL operation that failed on the GPU, ended by ncclCommAbort) at
// `at_us` without doing its work; what was queued behind it gets its modelled times again.
void release_stuck(std::uint64_t op, double at_us);
// Ends the held kernels whose host flag has changed (at `now_us`, the host call that follows the
// change) or whose limit has passed; they then run as queued.
void release_held_kernels(double now_us);
// Runs the held kernels as kernels that never waited (their own modelled time from their start)
// and what was queued behind them: the host is not raising a flag but waiting on one the kernel
// writes (held_kernel_watch.h).
void release_quiet_held_kernels();
// The stuck operation that `op` waits for, directly or through its dependencies; 0 when none.
std::uint64_t stuck_cause(std::uint64_t op);

// Drops every pending operation without executing it (reset).
void discard_pending();

// Modelled durations.
double transfer_us(std::size_t bytes, double gbps);   // copy_latency_us + bytes at gbps (GB/s)
double transfer_us(std::size_t bytes, double gbps, double latency_us);

}  // namespace mgpu::sim::rt
