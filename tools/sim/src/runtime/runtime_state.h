// The runtime core's state: the machine it simulates, per-device contexts, streams, events,
// the queue of device work and the calling thread's own state (current device, last error,
// host clock). One recursive mutex guards all of it: the simulator is serial by design.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <functional>

#include "mgpu/sim/api_enums.h"
#include "mgpu/sim/control.h"
#include "mgpu/sim/site.h"
#include "mgpu/sim/types.h"
#include "mgpu/trace.h"
#include "memory_timeline.h"

// The objects behind cudaStream_t and cudaEvent_t.
struct CUstream_st {
    std::uint64_t trace_id = 0;
    int device = 0;
    unsigned flags = 0;          // cudaStreamNonBlocking
    int priority = 0;
    bool legacy = false;         // the legacy default stream of its device
    bool per_thread = false;     // a host thread's per-thread default stream
    std::uint64_t last_op = 0;   // newest operation queued on it (0 = none)
    mgpu::sim::Site created_at;  // where the program created it (leaks are reported there)
};

struct CUevent_st {
    std::uint64_t trace_id = 0;
    int device = 0;
    unsigned flags = 0;
    std::uint64_t record_op = 0;   // the EventRecord operation of the latest cudaEventRecord
    bool recorded = false;         // its modelled time is op_end_us(record_op): released work moves it
    mgpu::sim::Site created_at;
};

namespace mgpu::sim {

// MGPU_FAULTS text ("malloc=N,enable711=N,lost=D,nopeer=0-1,2-3") and Faults::no_peer_pairs.
Faults parse_faults(const std::string& text);
std::vector<std::pair<int, int>> parse_peer_pairs(const std::string& text);

}  // namespace mgpu::sim

namespace mgpu::sim::rt {

struct DeviceContext {
    cudaError_t sticky = cudaSuccess;    // a kernel fault poisons the context until cudaDeviceReset
    std::unique_ptr<CUstream_st> legacy_stream;
    std::vector<bool> peer_enabled;      // peer_enabled[p]: kernels here may touch device p's memory
    unsigned flags = 0;                  // cudaSetDeviceFlags
    std::map<int, std::size_t> limits;   // cudaDeviceSetLimit, by cudaLimit (unset: the default)
    cudaFuncCache cache_config = cudaFuncCachePreferNone;   // cudaDeviceSetCacheConfig
    std::uint64_t barrier_op = 0;        // a cudaMemcpyPeer every later operation here waits for
    // The primary context. The real runtime creates it on the first call that needs the device
    // (cudaSetDevice since CUDA 12, cudaInitDevice, an allocation, a stream...), never for
    // enumeration (count, properties, attributes, PCI ids). Each costs about 0.5 GiB and 100-200 ms
    // on a real GPU, which is why lesson 1 checks who created one.
    bool context_created = false;
    ContextCreation creation;            // valid while context_created
};

// An operation queued on a stream and not yet executed.
struct PendingOp {
    std::uint64_t id = 0;
    int stream_device = 0;               // device of the stream it was queued on
    std::vector<std::uint64_t> deps;     // operations that must execute first
    std::function<void()> work;          // touches memory; empty for markers
    double end_us = 0;
    double duration_us = 0;              // end_us - start as modelled, to start it again (release_stuck)
};

// The modelled end of an operation that never finishes on its own (an NCCL operation that failed
// on the GPU), and of everything queued behind it, until release_stuck.
inline constexpr double kNeverUs = 1e15;
// How long a kernel polling a host flag nobody raises keeps its stream: p2pBandwidthLatencyTest's
// delay kernel gives up after 10^7 clocks, about 5 ms on an H200.
inline constexpr double kHeldKernelLimitUs = 5000;

struct Runtime {
    std::recursive_mutex mutex;
    bool up = false;
    std::uint64_t generation = 0;        // bumped by every reset; thread state follows it lazily
    Options options;
    MachineSpec machine;
    std::vector<DeviceContext> devices;

    std::unordered_map<CUstream_st*, std::unique_ptr<CUstream_st>> streams;           // created by the user
    // Destroyed streams stay allocated so that their handles are never reused and a second
    // destroy can be recognised.
    std::vector<std::unique_ptr<CUstream_st>> destroyed_streams;
    std::map<std::pair<int, int>, std::unique_ptr<CUstream_st>> per_thread_streams;    // (host thread, device)
    std::unordered_map<CUevent_st*, std::unique_ptr<CUevent_st>> events;
    std::uint64_t next_handle_id = 16;

    // Device work.
    std::map<std::uint64_t, PendingOp> pending;
    std::unordered_map<std::uint64_t, double> op_end;          // every op since reset: modelled end
    std::unordered_map<std::uint64_t, std::size_t> op_trace_index;
    std::map<std::pair<int, std::string>, double> engine_free; // (device or -1, engine) -> busy until
    std::map<int, MemoryTimeline> memory_busy;                 // device -> when its memory is busy
    std::map<std::pair<int, int>, MemoryTimeline> host_link_busy;   // (shared host link, direction) -> busy
    std::uint64_t next_op_id = 1;
    std::mt19937_64 rng;
    // Operations that never finish on their own, with what to say about them (release_stuck ends them).
    std::map<std::uint64_t, std::string> stuck_ops;
    // Kernels that poll a flag in page-locked host memory through a volatile pointer, as a kernel
    // that holds its stream until the host has queued more work does: held (stuck) from the
    // launch until the flag changes, the host waits for them, or kHeldKernelLimitUs has passed.
    struct HeldKernel {
        const volatile unsigned char* flag = nullptr;
        std::size_t size = 0;
        double since_us = 0;
        double own_us = 0;   // its modelled time had it not waited
    };
    std::map<std::uint64_t, HeldKernel> held_kernels;
    // Called when a host thread would wait for a stuck operation: on GPUs it would wait forever, so
    // the handler ends the program with a diagnosis. The argument names the waiting call.
    std::function<void(const std::string&)> on_wait_forever;
    // Called when cudaStreamQuery finds a stream behind a stuck operation (a loop that polls only
    // the stream polls forever).
    std::function<void(const std::string&)> on_stuck_poll;

    mgpu::trace::Trace trace;
    std::uint64_t next_api_seq = 1;
    std::map<int, double> host_clocks;   // host thread -> virtual time (us)

    int malloc_calls = 0;
    int stream_creations = 0;
    int enable_calls = 0;
    std::vector<ContextCreation> context_creations;   // every primary context since reset, in order
    std::unordered_map<const void*, int> max_dynamic_shared;   // cudaFuncSetAttribute per kernel
};

Runtime& runtime();

// Brings the machine up from the environment if nothing has yet. Exits with a message when
// the environment names a machine that cannot be built (no CUDA call could succeed then).
void ensure_up();

// Calling thread.
int host_thread_id();
int& current_device();           // of the calling thread; 0 after a reset
cudaError_t& last_error();
double& host_clock();            // the calling thread's virtual time

int device_count();
bool valid_device(int device);

// 35 without a driver, 100 without devices, else 0.
cudaError_t machine_status();
// machine_status, then 46 for the lost device and the sticky error of a faulted context.
cudaError_t context_status(int device);

// Streams by handle. stream 0 is the legacy stream of the current device, or the calling
// thread's own stream when per_thread_default is set. nullptr when the handle is not live.
CUstream_st* resolve_stream(cudaStream_t stream, bool per_thread_default);
CUstream_st* legacy_stream(int device);
CUstream_st* per_thread_stream(int device);
std::uint64_t stream_trace_id(cudaStream_t stream, bool per_thread_default);
std::vector<CUstream_st*> streams_of_device(int device);   // legacy, per-thread and created ones
CUevent_st* find_event(cudaEvent_t event);

bool can_peer(int from, int to);   // topology's answer for the ordered pair, after injected faults

// Creates the device's primary context if it has none yet (the caller has validated the device).
void ensure_context(int device);

// Hands every operation of the device back as failed when its context is torn down.
void reset_device_context(int device);

}  // namespace mgpu::sim::rt
