#include "run_report.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "api_call.h"
#include "memory/memory.h"
#include "mgpu/races.h"
#include "runtime_state.h"

namespace mgpu::sim::rt {

namespace {

using nlohmann::json;

json place(const char* file, int line) {
    return {{"file", file != nullptr ? file : ""}, {"line", line}};
}

const mgpu::trace::ApiCall* call_with_seq(const mgpu::trace::Trace& trace, std::uint64_t seq) {
    for (const auto& call : trace.calls)
        if (call.seq == seq) return &call;
    return nullptr;
}

json describe_op(const mgpu::trace::Trace& trace, const mgpu::trace::DeviceOp& op) {
    json out = {{"kind", mgpu::trace::to_string(op.kind)}, {"name", op.name},       {"device", op.device},
                {"stream", op.stream},                     {"start_us", op.start_us}, {"end_us", op.end_us},
                {"file", ""},                              {"line", 0}};
    if (const auto* call = call_with_seq(trace, op.api_seq)) {
        out["file"] = call->file;
        out["line"] = call->line;
        out["call"] = call->text;
    }
    return out;
}

// The call that made a page-locked range: cudaHostRegister names it as an argument, the allocating
// calls show it as their output.
json host_range_origin(const mgpu::trace::Trace& trace, const mem::HostRange& range) {
    const std::string shown = hex_pointer(reinterpret_cast<const void*>(range.base));
    for (auto call = trace.calls.rbegin(); call != trace.calls.rend(); ++call) {
        const bool registered = call->name == "cudaHostRegister" && !call->args.empty() &&
                                static_cast<std::uintptr_t>(call->args.front()) == range.base;
        const bool allocated = (call->name == "cudaMallocHost" || call->name == "cudaHostAlloc" ||
                                call->name == "cudaMallocManaged") &&
                               call->text.find(shown) != std::string::npos;
        if (registered || allocated) return {{"file", call->file}, {"line", call->line}, {"call", call->name}};
    }
    return {{"file", ""}, {"line", 0}, {"call", range.allocated_by_runtime ? "cudaMallocHost" : "cudaHostRegister"}};
}

json collect() {
    Runtime& r = runtime();
    json report = {{"leaks", json::array()}, {"unfinished", json::array()}, {"races", json::array()}};
    for (const auto& [handle, stream] : r.streams)
        report["leaks"].push_back({{"kind", "stream"}, {"device", stream->device}, {"id", stream->trace_id},
                                   {"at", place(stream->created_at.file, stream->created_at.line)}});
    for (const auto& [handle, event] : r.events)
        report["leaks"].push_back({{"kind", "event"}, {"device", event->device}, {"id", event->trace_id},
                                   {"at", place(event->created_at.file, event->created_at.line)}});
    for (const auto& allocation : mem::allocations())
        report["leaks"].push_back({{"kind", "device memory"}, {"device", allocation.device},
                                   {"bytes", allocation.size}, {"id", allocation.serial},
                                   {"at", place(allocation.site.file, allocation.site.line)}});
    for (const auto& range : mem::host_ranges())
        report["leaks"].push_back({{"kind", (range.flags & mem::kManagedMemory) != 0 ? "managed memory"
                                            : range.allocated_by_runtime      ? "page-locked memory"
                                                                              : "registered memory"},
                                   {"device", -1}, {"bytes", range.size}, {"id", range.base},
                                   {"at", host_range_origin(r.trace, range)}});

    // The program's last moment on any host thread: work ending later was never waited for.
    double program_end = 0;
    for (const auto& [thread, clock] : r.host_clocks) program_end = std::max(program_end, clock);
    for (const auto& op : r.trace.ops) {
        if (op.kind == mgpu::trace::OpKind::EventRecord || op.kind == mgpu::trace::OpKind::StreamWait) continue;
        if (op.end_us > program_end + 1e-6) report["unfinished"].push_back(describe_op(r.trace, op));
    }
    report["program_end_us"] = program_end;

    for (const auto& race : mgpu::trace::find_races(r.trace, 1000))
        report["races"].push_back({{"first", describe_op(r.trace, *race.first)},
                                   {"second", describe_op(r.trace, *race.second)},
                                   {"bytes", race.end - race.begin},
                                   {"address", hex_pointer(reinterpret_cast<const void*>(race.begin))},
                                   {"second_writes", race.second_writes}});
    return report;
}

void write_report() {
    const char* path = std::getenv("MGPU_RUN_REPORT");
    if (path == nullptr || *path == '\0') return;
    json report;
    {
        std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
        if (!runtime().up) return;
        report = collect();
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << report.dump(1);
    if (!out) std::fprintf(stderr, "mgpu-sim: could not write the run report to %s (MGPU_RUN_REPORT).\n", path);
}

}  // namespace

void write_run_report_at_exit_if_asked() {
    static std::once_flag registered;
    const char* path = std::getenv("MGPU_RUN_REPORT");
    if (path == nullptr || *path == '\0') return;
    std::call_once(registered, [] { std::atexit(write_report); });
}

}  // namespace mgpu::sim::rt
