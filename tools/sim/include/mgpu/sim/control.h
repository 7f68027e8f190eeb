// Control of the simulator from harness code (the checker, the tests, `mgpu run`).
// Student code never needs this header: the machine comes up by itself on the first
// CUDA call, from MGPU_TOPOLOGY / MGPU_SCHEDULE / CUDA_VISIBLE_DEVICES.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mgpu/sim/machine.h"
#include "mgpu/trace.h"

namespace mgpu::sim {

enum class ScheduleKind { Eager, Lazy, Shuffle };

struct Schedule {
    ScheduleKind kind = ScheduleKind::Eager;
    std::uint64_t seed = 0;   // shuffle only
};

// "eager", "lazy", "shuffle:SEED". Throws std::invalid_argument with a readable message.
Schedule parse_schedule(const std::string& text);
std::string to_string(const Schedule& schedule);

// Faults injected on request.
struct Faults {
    int malloc_fails_at = 0;          // cudaMalloc call number N (1-based, counted from reset) returns 2; 0 = never
    // The Nth stream creation (cudaStreamCreate, ...WithFlags, ...WithPriority; 1-based, counted from
    // reset, on any device) returns 2 (cudaErrorMemoryAllocation), as when the device runs out of the
    // memory a stream needs, and makes no stream. 0 = never.
    int stream_create_fails_at = 0;
    int enable_gives_711_at = 0;      // the Nth cudaDeviceEnablePeerAccess returns 711 (too many peers); 0 = never
    int lost_device = -1;             // this device answers every call with 46 (devices unavailable)
    // The Nth NCCL operation (collective or send/receive pair, counted from reset as they are
    // matched) fails on the GPU as when a peer dies: it never finishes, its data does not move,
    // and every rank of its communicator reports ncclRemoteError as its asynchronous error until
    // ncclCommAbort ends it. 0 = never.
    int nccl_fails_at = 0;
    // Pairs listed here cannot peer even if the topology says they can ("0-1,2-3" form; both directions).
    std::string no_peer_pairs;
};

struct Options {
    std::string topology = "h200";    // preset name or JSON file
    Schedule schedule;
    Faults faults;
    bool apply_cuda_visible_devices = true;   // read CUDA_VISIBLE_DEVICES from the environment
};

// Options from the environment: MGPU_TOPOLOGY, MGPU_SCHEDULE,
// MGPU_FAULTS ("malloc=N,stream=N,enable711=N,lost=D,nopeer=0-1,ncclfail=N").
Options options_from_environment();

// Raised by reset_machine when the machine at hand cannot host the scenario (the real-GPU
// backend with fewer GPUs or peer pairs than the topology needs, or a simulator-only feature
// such as a schedule or an injected fault). The checker reports the scenario as skipped.
struct ScenarioUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The real-GPU backend's reason when only the process's start stands in the way: the scenario sets
// CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER, which the real runtime reads once, when the process
// starts. A process started with those values can host it (mgpu::check::restart_case_with_environment).
struct EnvironmentFixedAtStart : ScenarioUnavailable {
    using ScenarioUnavailable::ScenarioUnavailable;
};

// Throws away every device, allocation, stream, event and error state and brings up a new machine.
// Host threads keep running; their current device becomes 0. Throws TopologyError on a bad topology.
void reset_machine(const Options& options);

// The machine as the runtime sees it now (after CUDA_VISIBLE_DEVICES).
const MachineSpec& machine();
const Options& options();

// Everything recorded since the last reset (or clear_trace).
const mgpu::trace::Trace& trace();
void clear_trace();

// Host time on the virtual clock, in microseconds.
double host_now_us();

// Executes every queued operation (as cudaDeviceSynchronize on all devices would) without
// recording API calls; used by harnesses between a student's function and the checks.
void drain_all();

// Bytes currently allocated with cudaMalloc on a device, and the number of live allocations.
std::size_t device_bytes_in_use(int device);
std::size_t live_device_allocations(int device);
std::size_t live_streams();
std::size_t live_events();
std::size_t live_pinned_host_allocations();
// Page-locked host ranges alive now: those cudaMallocHost and cudaHostAlloc made and those
// cudaHostRegister pinned in place. Either is the page-locked memory a copy engine works on.
std::size_t live_page_locked_ranges();

// The id a live stream has in the trace (ApiCall::stream, DeviceOp::stream); 0 (the legacy
// stream's) for a null handle or one that is not a live stream.
std::uint64_t trace_id_of_stream(const void* stream);

// Whether peer access from `from` to `to` is enabled now.
bool peer_access_enabled(int from, int to);

// One primary context coming to life: which device, on which host thread, during which API call
// (its seq in the trace and its name) and when on that thread's virtual clock.
struct ContextCreation {
    int device = -1;
    int host_thread = 0;
    std::uint64_t api_seq = 0;
    std::string api_name;
    double at_us = 0;
};

// Whether the device has a primary context now (created and not reset since).
bool has_context(int device);
// Every context created since the last reset_machine, oldest first (cudaDeviceReset and a later
// call that needs the device give a second entry for it).
std::vector<ContextCreation> context_creations();

}  // namespace mgpu::sim
