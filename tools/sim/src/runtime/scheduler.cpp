#include "scheduler.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace mgpu::sim::rt {

namespace {

void end_stuck(std::uint64_t op, double at_us, bool run_its_work);


std::uint64_t g_executing = 0;

void add_dep(std::vector<std::uint64_t>& deps, std::uint64_t op) {
    if (op != 0 && std::find(deps.begin(), deps.end(), op) == deps.end()) deps.push_back(op);
}

bool blocks_with_legacy(const CUstream_st* stream) {
    return !stream->legacy && (stream->flags & 0x1u) == 0;
}

// Stream order, the legacy default stream's two-way barrier with blocking streams, and the
// device-wide serialisation of cudaMemcpyPeer.
std::vector<std::uint64_t> implicit_dependencies(const OpRequest& request) {
    Runtime& r = runtime();
    std::vector<std::uint64_t> deps;
    CUstream_st* stream = request.stream;
    add_dep(deps, stream->last_op);
    if (stream->legacy) {
        for (CUstream_st* other : streams_of_device(stream->device))
            if (blocks_with_legacy(other)) add_dep(deps, other->last_op);
    } else if (blocks_with_legacy(stream)) {
        add_dep(deps, legacy_stream(stream->device)->last_op);
    }
    add_dep(deps, r.devices[stream->device].barrier_op);
    for (int device : request.barrier_devices) {
        for (CUstream_st* other : streams_of_device(device)) add_dep(deps, other->last_op);
        add_dep(deps, r.devices[device].barrier_op);
    }
    for (std::uint64_t op : request.extra_deps) add_dep(deps, op);
    return deps;
}

void execute(std::uint64_t id) {
    Runtime& r = runtime();
    auto it = r.pending.find(id);
    if (it == r.pending.end()) return;
    PendingOp op = std::move(it->second);
    r.pending.erase(it);
    // A faulted context runs nothing more, as on hardware.
    if (op.work && r.devices[op.stream_device].sticky == cudaSuccess) {
        g_executing = id;
        op.work();
        g_executing = 0;
    }
}

std::uint64_t pick(const std::set<std::uint64_t>& ready) {
    Runtime& r = runtime();
    switch (r.options.schedule.kind) {
    case ScheduleKind::Eager:
        return *ready.begin();
    case ScheduleKind::Lazy:
        return *ready.rbegin();
    case ScheduleKind::Shuffle: {
        std::uniform_int_distribution<std::size_t> choose(0, ready.size() - 1);
        return *std::next(ready.begin(), static_cast<std::ptrdiff_t>(choose(r.rng)));
    }
    }
    return *ready.begin();
}

void collect_closure(std::uint64_t id, std::set<std::uint64_t>& closure) {
    Runtime& r = runtime();
    std::vector<std::uint64_t> stack{id};
    while (!stack.empty()) {
        std::uint64_t cur = stack.back();
        stack.pop_back();
        auto it = r.pending.find(cur);
        if (it == r.pending.end() || !closure.insert(cur).second) continue;
        for (std::uint64_t dep : it->second.deps) stack.push_back(dep);
    }
}

}  // namespace

double transfer_us(std::size_t bytes, double gbps) {
    return transfer_us(bytes, gbps, runtime().machine.cost.copy_latency_us);
}

double transfer_us(std::size_t bytes, double gbps, double latency_us) {
    if (gbps <= 0) return latency_us;
    return latency_us + static_cast<double>(bytes) / (gbps * 1e3);
}

std::vector<std::uint64_t> stream_dependencies(CUstream_st* stream) {
    OpRequest request;
    request.stream = stream;
    return implicit_dependencies(request);
}

Enqueued enqueue(OpRequest&& request) {
    Runtime& r = runtime();
    const std::uint64_t id = r.next_op_id++;
    PendingOp op;
    op.id = id;
    op.stream_device = request.stream->device;
    op.deps = implicit_dependencies(request);
    op.work = std::move(request.work);

    double start = request.not_before_us >= 0 ? request.not_before_us : host_clock();
    for (std::uint64_t dep : op.deps) start = std::max(start, op_end_us(dep));
    const std::pair<int, std::string> engine_key{request.engine_device, request.engine};
    if (!request.engine.empty()) start = std::max(start, r.engine_free[engine_key]);
    if (request.start_at_us >= 0) start = request.start_at_us;
    double end = start + request.duration_us;
    const bool never = start >= kNeverUs;
    if (!never && request.memory_device >= 0 && request.memory_us > 0) {
        const double memory_done = r.memory_busy[request.memory_device].occupy(start, request.memory_us);
        end += std::max(0.0, memory_done - start - request.memory_us);
    }
    // A shared host link carries the bytes of every device on it: booked like device memory, so
    // that copies of two devices behind one switch at once take as long as the link needs for both.
    double link_delay = 0;
    for (const auto& [link, direction] : never ? decltype(request.host_links){} : request.host_links) {
        const auto& shared = r.machine.shared_host_links;
        if (link < 0 || static_cast<std::size_t>(link) >= shared.size() || shared[link].gbps <= 0) continue;
        const double link_us = static_cast<double>(request.bytes) / (shared[link].gbps * 1e3);
        const double link_done = r.host_link_busy[{link, direction}].occupy(start, link_us);
        link_delay = std::max(link_delay, link_done - start - link_us);
    }
    end += std::max(0.0, link_delay);
    if (!request.engine.empty() && end < kNeverUs) r.engine_free[engine_key] = end;
    op.end_us = end;
    op.duration_us = std::max(0.0, end - start);
    if (start >= kNeverUs) op.duration_us = request.duration_us;
    r.op_end[id] = end;

    mgpu::trace::DeviceOp record;
    record.id = id;
    record.kind = request.kind;
    record.name = std::move(request.name);
    record.device = request.device;
    record.src_device = request.src_device;
    record.dst_device = request.dst_device;
    record.stream = request.stream->trace_id;
    record.engine = request.engine;
    record.start_us = start;
    record.end_us = end;
    record.bytes = request.bytes;
    record.pinned_host = request.pinned_host;
    record.staged = request.staged;
    record.peer_access = request.peer_access;
    record.api_seq = r.next_api_seq - 1;
    record.threads = request.threads;
    record.touches = std::move(request.touches);
    r.op_trace_index[id] = r.trace.ops.size();
    r.trace.ops.push_back(std::move(record));

    request.stream->last_op = id;
    for (int device : request.barrier_devices) r.devices[device].barrier_op = id;
    r.pending.emplace(id, std::move(op));
    if (!request.stuck.empty()) r.stuck_ops[id] = std::move(request.stuck);

    if (r.options.schedule.kind == ScheduleKind::Eager) run_until_done({id}, false);
    return Enqueued{id, end};
}

void run_until_done(const std::vector<std::uint64_t>& ops, bool host_waits) {
    Runtime& r = runtime();
    std::set<std::uint64_t> closure;
    for (std::uint64_t id : ops) collect_closure(id, closure);
    // A host that waits for a kernel polling its flag has raised the flag or never will: on GPUs
    // the kernel ends now or at its own timeout.
    if (host_waits && !r.held_kernels.empty())
        for (std::uint64_t id : closure)
            if (r.held_kernels.count(id)) end_stuck(id, std::max(host_clock(), r.held_kernels.at(id).since_us), true);
    // Kahn's algorithm over the closure; the schedule decides among the ready operations.
    std::map<std::uint64_t, int> waiting;
    std::map<std::uint64_t, std::vector<std::uint64_t>> dependents;
    std::set<std::uint64_t> ready;
    for (std::uint64_t id : closure) {
        int count = 0;
        for (std::uint64_t dep : r.pending.at(id).deps) {
            if (r.pending.count(dep) == 0) continue;
            ++count;
            dependents[dep].push_back(id);
        }
        waiting[id] = count;
        // A stuck operation never runs, nor does anything behind it, until it is released.
        if (count == 0 && r.stuck_ops.count(id) == 0) ready.insert(id);
    }
    while (!ready.empty()) {
        const std::uint64_t chosen = pick(ready);
        ready.erase(chosen);
        execute(chosen);
        for (std::uint64_t next : dependents[chosen])
            if (--waiting[next] == 0) ready.insert(next);
    }
}

double run_device(int device) {
    Runtime& r = runtime();
    std::vector<std::uint64_t> ops;
    for (const auto& [id, op] : r.pending)
        if (op.stream_device == device) ops.push_back(id);
    ops.push_back(r.devices[device].barrier_op);
    run_until_done(ops);
    double latest = 0;
    for (CUstream_st* stream : streams_of_device(device)) latest = std::max(latest, op_end_us(stream->last_op));
    latest = std::max(latest, op_end_us(r.devices[device].barrier_op));
    return latest;
}

double run_all() {
    Runtime& r = runtime();
    std::vector<std::uint64_t> ops;
    for (const auto& entry : r.pending) ops.push_back(entry.first);
    run_until_done(ops);
    double latest = 0;
    for (const auto& entry : r.op_end) latest = std::max(latest, entry.second);
    return latest;
}

namespace {

// Ends stuck `op` at `at_us` and gives what was queued behind it its modelled times again.
void end_stuck(std::uint64_t op, double at_us, bool run_its_work) {
    Runtime& r = runtime();
    if (r.stuck_ops.erase(op) == 0) return;
    r.held_kernels.erase(op);
    auto it = r.pending.find(op);
    if (it != r.pending.end() && !run_its_work) it->second.work = nullptr;   // the data never moved
    // Pending operations in id order: every dependency has a smaller id, so each end is settled
    // before an operation that follows it is looked at.
    for (auto& [id, pending] : r.pending) {
        if (pending.end_us < kNeverUs) continue;
        bool still_stuck = r.stuck_ops.count(id) > 0;
        double start = at_us;
        for (std::uint64_t dep : pending.deps) {
            const double dep_end = op_end_us(dep);
            if (dep_end >= kNeverUs) still_stuck = true;
            start = std::max(start, dep_end);
        }
        if (still_stuck) continue;
        const double end = id == op ? start : start + pending.duration_us;
        pending.end_us = end;
        r.op_end[id] = end;
        auto index = r.op_trace_index.find(id);
        if (index != r.op_trace_index.end() && index->second < r.trace.ops.size()) {
            r.trace.ops[index->second].start_us = id == op ? r.trace.ops[index->second].start_us : start;
            r.trace.ops[index->second].end_us = end;
        }
    }
}

bool flag_raised(const Runtime::HeldKernel& held) {
    for (std::size_t i = 0; i < held.size; ++i)
        if (held.flag[i] != 0) return true;
    return false;
}

}  // namespace

void release_stuck(std::uint64_t op, double at_us) { end_stuck(op, at_us, false); }

void release_held_kernels(double now_us) {
    Runtime& r = runtime();
    std::vector<std::pair<std::uint64_t, double>> released;
    for (const auto& [op, held] : r.held_kernels) {
        if (flag_raised(held)) released.emplace_back(op, std::max(now_us, held.since_us));
        else if (now_us >= held.since_us + kHeldKernelLimitUs) released.emplace_back(op, held.since_us + kHeldKernelLimitUs);
    }
    for (const auto& [op, at_us] : released) end_stuck(op, at_us, true);
}

void release_quiet_held_kernels() {
    Runtime& r = runtime();
    std::vector<std::pair<std::uint64_t, double>> ends;
    for (const auto& [op, held] : r.held_kernels) ends.emplace_back(op, held.since_us + held.own_us);
    std::vector<std::uint64_t> released;
    for (const auto& [op, end_us] : ends) {
        end_stuck(op, end_us, true);
        released.push_back(op);
    }
    run_until_done(released, false);
}

std::uint64_t stuck_cause(std::uint64_t op) {
    Runtime& r = runtime();
    std::set<std::uint64_t> closure;
    collect_closure(op, closure);
    for (std::uint64_t id : closure)
        if (r.stuck_ops.count(id)) return id;
    return 0;
}

bool is_done(std::uint64_t op) { return runtime().pending.count(op) == 0; }

double op_end_us(std::uint64_t op) {
    if (op == 0) return 0;
    auto& ends = runtime().op_end;
    auto it = ends.find(op);
    return it == ends.end() ? 0 : it->second;
}

std::uint64_t executing_op() { return g_executing; }

void mark_op_error(std::uint64_t op, int code) {
    Runtime& r = runtime();
    auto it = r.op_trace_index.find(op);
    if (it != r.op_trace_index.end() && it->second < r.trace.ops.size() && r.trace.ops[it->second].id == op)
        r.trace.ops[it->second].error = code;
}

void discard_pending() {
    Runtime& r = runtime();
    r.pending.clear();
    r.stuck_ops.clear();
    r.held_kernels.clear();
    r.op_end.clear();
    r.op_trace_index.clear();
    r.engine_free.clear();
    r.memory_busy.clear();
    r.host_link_busy.clear();
    r.next_op_id = 1;
    g_executing = 0;
}

}  // namespace mgpu::sim::rt
