// control.h: bringing a machine up, and what harnesses read back from the runtime.
#include <algorithm>
#include <cstdlib>

#include "memory/memory.h"
#include "mgpu/sim/control.h"
#include "runtime_state.h"
#include "scheduler.h"
#include "symbols.h"
#include "host_order.h"
#include "run_report.h"
#include "trace_export.h"

namespace mgpu::sim {

using namespace rt;

void reset_machine(const Options& options) {
    Runtime& r = runtime();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    // Everything that can fail happens before the old machine is torn down.
    MachineSpec spec = load_machine(options.topology);
    if (options.apply_cuda_visible_devices) {
        // The driver orders the devices first and applies CUDA_VISIBLE_DEVICES's indices to that order.
        spec = apply_device_order(spec, std::getenv("CUDA_DEVICE_ORDER"));
        spec = apply_visible_devices(spec, std::getenv("CUDA_VISIBLE_DEVICES"));
    }
    const int count = static_cast<int>(spec.devices.size());
    spec.links.resize(count);
    for (auto& row : spec.links) row.resize(count);
    for (auto [a, b] : parse_peer_pairs(options.faults.no_peer_pairs)) {
        if (a >= count || b >= count || a == b) continue;   // a pair this machine does not have
        spec.links[a][b].can_peer = false;
        spec.links[b][a].can_peer = false;
    }

    discard_pending();
    r.streams.clear();
    r.destroyed_streams.clear();
    r.per_thread_streams.clear();
    r.events.clear();
    r.machine = std::move(spec);
    r.options = options;
    r.devices.clear();
    r.devices.resize(count);
    std::vector<std::size_t> capacities;
    for (int d = 0; d < count; ++d) {
        DeviceContext& context = r.devices[d];
        context.legacy_stream = std::make_unique<CUstream_st>();
        context.legacy_stream->trace_id = mgpu::trace::kLegacyStream;
        context.legacy_stream->device = d;
        context.legacy_stream->legacy = true;
        context.peer_enabled.assign(count, false);
        capacities.push_back(r.machine.devices[d].free_mem);
    }
    mem::reset(capacities);
    forget_symbols();
    r.trace.clear();
    r.next_api_seq = 1;
    r.host_clocks.clear();
    host_order_new_machine();
    r.next_handle_id = 16;
    r.malloc_calls = 0;
    r.stream_creations = 0;
    r.enable_calls = 0;
    r.context_creations.clear();
    r.max_dynamic_shared.clear();
    r.rng.seed(options.schedule.seed);
    ++r.generation;
    r.up = true;
    export_trace_at_exit_if_asked();
    write_run_report_at_exit_if_asked();
}

const MachineSpec& machine() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    ensure_up();
    return runtime().machine;
}

const Options& options() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    ensure_up();
    return runtime().options;
}

const mgpu::trace::Trace& trace() { return runtime().trace; }

void clear_trace() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    runtime().trace.clear();
    runtime().op_trace_index.clear();
}

double host_now_us() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return host_clock();
}

void drain_all() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    if (!runtime().up) return;
    double& clock = host_clock();
    clock = std::max(clock, run_all());
}

std::size_t device_bytes_in_use(int device) {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return valid_device(device) ? mem::bytes_in_use(device) : 0;
}

std::size_t live_device_allocations(int device) {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return valid_device(device) ? mem::live_allocations(device) : 0;
}

std::size_t live_streams() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return runtime().streams.size();
}

std::uint64_t trace_id_of_stream(const void* stream) {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    auto* handle = static_cast<CUstream_st*>(const_cast<void*>(stream));
    auto it = runtime().streams.find(handle);
    return it == runtime().streams.end() ? 0 : it->second->trace_id;
}

std::size_t live_events() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return runtime().events.size();
}

std::size_t live_pinned_host_allocations() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return mem::live_host_allocations();
}

std::size_t live_page_locked_ranges() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    std::size_t count = 0;
    for (const auto& range : mem::host_ranges()) count += (range.flags & mem::kManagedMemory) == 0 ? 1 : 0;
    return count;
}

bool peer_access_enabled(int from, int to) {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    if (!valid_device(from) || !valid_device(to)) return false;
    return runtime().devices[from].peer_enabled[to];
}

bool has_context(int device) {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return valid_device(device) && runtime().devices[device].context_created;
}

std::vector<ContextCreation> context_creations() {
    std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
    return runtime().context_creations;
}

}  // namespace mgpu::sim
