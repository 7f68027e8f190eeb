#include "runtime_state.h"

#include "host_order.h"

#include <cstdio>
#include <cstdlib>

#include "host_function.h"
#include "memory/memory.h"
#include "scheduler.h"
#include "symbols.h"

namespace mgpu::sim::rt {

namespace {

struct ThreadState {
    std::uint64_t generation = ~std::uint64_t{0};
    int device = 0;
    cudaError_t last_error = cudaSuccess;
};

thread_local ThreadState t_state;
thread_local int t_host_thread = -1;
int g_next_host_thread = 0;

ThreadState& thread_state() {
    Runtime& r = runtime();
    if (t_state.generation != r.generation) t_state = ThreadState{r.generation, 0, cudaSuccess};
    return t_state;
}

}  // namespace

Runtime& runtime() {
    static Runtime* instance = [] {
        auto* made = new Runtime();   // never destroyed: threads and exit handlers may still call in
        host_order_ignore(made->mutex.native_handle());
        return made;
    }();
    return *instance;
}

void ensure_up() {
    Runtime& r = runtime();
    if (r.up) return;
    Options options;
    try {
        options = options_from_environment();
        reset_machine(options);
    } catch (const std::exception& error) {
        std::fprintf(stderr,
                     "mgpu-sim: cannot bring up the simulated machine: %s\n"
                     "  Check MGPU_TOPOLOGY, MGPU_SCHEDULE, MGPU_FAULTS and CUDA_VISIBLE_DEVICES.\n",
                     error.what());
        std::exit(2);
    }
}

int host_thread_id() {
    if (t_host_thread < 0) {
        // A host function's thread borrows the lock the thread waiting for it holds (host_function.h).
        std::unique_lock<std::recursive_mutex> lock(runtime().mutex, std::defer_lock);
        if (!inside_host_function()) lock.lock();
        t_host_thread = g_next_host_thread++;
    }
    return t_host_thread;
}

int& current_device() { return thread_state().device; }
cudaError_t& last_error() { return thread_state().last_error; }

double& host_clock() {
    Runtime& r = runtime();
    const int me = host_thread_id();
    auto it = r.host_clocks.find(me);
    if (it != r.host_clocks.end()) return it->second;
    // A thread seen for the first time starts where its creator stood when it made it
    // (host_order.h). One the simulator did not see made starts where the earliest thread
    // stands now: such threads are usually spawned by the main thread.
    const double start = host_order_knows_start() ? host_order_floor_us()
                         : r.host_clocks.empty()  ? 0.0
                                                  : r.host_clocks.begin()->second;
    return r.host_clocks.emplace(me, start).first->second;
}

int device_count() { return static_cast<int>(runtime().machine.devices.size()); }
bool valid_device(int device) { return device >= 0 && device < device_count(); }

cudaError_t machine_status() {
    if (inside_host_function()) return cudaErrorNotPermitted;
    Runtime& r = runtime();
    if (!r.machine.has_driver) return cudaErrorInsufficientDriver;
    // A device listed twice in CUDA_VISIBLE_DEVICES, or an unknown CUDA_DEVICE_ORDER: the runtime
    // cannot initialise, and every call that needs it answers 101.
    if (!r.machine.enumeration_problem.empty()) return cudaErrorInvalidDevice;
    if (r.machine.devices.empty()) return cudaErrorNoDevice;
    return cudaSuccess;
}

cudaError_t context_status(int device) {
    if (cudaError_t status = machine_status(); status != cudaSuccess) return status;
    Runtime& r = runtime();
    if (!valid_device(device)) return cudaErrorInvalidDevice;
    if (device == r.options.faults.lost_device) return cudaErrorDevicesUnavailable;
    ensure_context(device);   // every call that checks a context's state needs the context
    return r.devices[device].sticky;
}

void ensure_context(int device) {
    Runtime& r = runtime();
    DeviceContext& context = r.devices[device];
    if (context.context_created) return;
    context.context_created = true;
    context.creation.device = device;
    context.creation.host_thread = host_thread_id();
    context.creation.api_seq = r.next_api_seq - 1;   // the call being made now
    context.creation.at_us = host_clock();
    const auto& calls = r.trace.calls;
    context.creation.api_name = calls.empty() ? "" : calls.back().name;
    r.context_creations.push_back(context.creation);
}

CUstream_st* legacy_stream(int device) { return runtime().devices[device].legacy_stream.get(); }

CUstream_st* per_thread_stream(int device) {
    Runtime& r = runtime();
    auto key = std::make_pair(host_thread_id(), device);
    auto it = r.per_thread_streams.find(key);
    if (it != r.per_thread_streams.end()) return it->second.get();
    auto stream = std::make_unique<CUstream_st>();
    stream->trace_id = mgpu::trace::kPerThreadStream;
    stream->device = device;
    stream->per_thread = true;
    return r.per_thread_streams.emplace(key, std::move(stream)).first->second.get();
}

CUstream_st* resolve_stream(cudaStream_t stream, bool per_thread_default) {
    Runtime& r = runtime();
    const int device = current_device();
    if (stream == nullptr) {
        if (!valid_device(device)) return nullptr;
        return per_thread_default ? per_thread_stream(device) : legacy_stream(device);
    }
    if (stream == cudaStreamLegacy) return valid_device(device) ? legacy_stream(device) : nullptr;
    if (stream == cudaStreamPerThread) return valid_device(device) ? per_thread_stream(device) : nullptr;
    auto it = r.streams.find(stream);
    return it == r.streams.end() ? nullptr : it->second.get();
}

std::uint64_t stream_trace_id(cudaStream_t stream, bool per_thread_default) {
    if (stream == nullptr) return per_thread_default ? mgpu::trace::kPerThreadStream : mgpu::trace::kLegacyStream;
    if (stream == cudaStreamLegacy) return mgpu::trace::kLegacyStream;
    if (stream == cudaStreamPerThread) return mgpu::trace::kPerThreadStream;
    auto& streams = runtime().streams;
    auto it = streams.find(stream);
    // A handle that is not live is recorded by its address so the trace still shows what was passed.
    return it == streams.end() ? reinterpret_cast<std::uintptr_t>(stream) : it->second->trace_id;
}

std::vector<CUstream_st*> streams_of_device(int device) {
    Runtime& r = runtime();
    std::vector<CUstream_st*> result;
    if (!valid_device(device)) return result;
    result.push_back(legacy_stream(device));
    for (auto& [key, stream] : r.per_thread_streams)
        if (key.second == device) result.push_back(stream.get());
    for (auto& [handle, stream] : r.streams)
        if (stream->device == device) result.push_back(stream.get());
    return result;
}

CUevent_st* find_event(cudaEvent_t event) {
    auto& events = runtime().events;
    auto it = events.find(event);
    return it == events.end() ? nullptr : it->second.get();
}

bool can_peer(int from, int to) {
    Runtime& r = runtime();
    if (!valid_device(from) || !valid_device(to) || from == to) return false;
    if (static_cast<std::size_t>(from) >= r.machine.links.size()) return false;
    const auto& row = r.machine.links[from];
    return static_cast<std::size_t>(to) < row.size() && row[to].can_peer;
}

void reset_device_context(int device) {
    Runtime& r = runtime();
    run_device(device);
    for (const mem::Allocation& allocation : mem::allocations())
        if (allocation.device == device) mem::device_free(reinterpret_cast<void*>(allocation.base));
    unload_symbols(device);
    for (auto it = r.streams.begin(); it != r.streams.end();) {
        if (it->second->device != device) {
            ++it;
            continue;
        }
        r.destroyed_streams.push_back(std::move(it->second));
        it = r.streams.erase(it);
    }
    for (auto it = r.per_thread_streams.begin(); it != r.per_thread_streams.end();)
        it = it->first.second == device ? r.per_thread_streams.erase(it) : std::next(it);
    for (auto it = r.events.begin(); it != r.events.end();)
        it = it->second->device == device ? r.events.erase(it) : std::next(it);
    DeviceContext& context = r.devices[device];
    context.context_created = false;   // the next call that needs the device creates a new one
    context.sticky = cudaSuccess;
    context.flags = 0;
    context.barrier_op = 0;
    context.legacy_stream->last_op = 0;
    std::fill(context.peer_enabled.begin(), context.peer_enabled.end(), false);
    for (DeviceContext& other : r.devices) other.peer_enabled[device] = false;
}

}  // namespace mgpu::sim::rt
