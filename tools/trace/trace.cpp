// Queries over a run's trace and its export as Chrome trace event JSON (ui.perfetto.dev,
// chrome://tracing): the host as one process with a track per host thread, each device as a
// process with a track per stream.
#include "mgpu/trace.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace mgpu::trace {

const char* to_string(OpKind kind) {
    switch (kind) {
    case OpKind::Kernel: return "kernel";
    case OpKind::MemcpyHtoD: return "memcpy-htod";
    case OpKind::MemcpyDtoH: return "memcpy-dtoh";
    case OpKind::MemcpyDtoD: return "memcpy-dtod";
    case OpKind::MemcpyPeer: return "memcpy-peer";
    case OpKind::MemcpyHtoH: return "memcpy-htoh";
    case OpKind::Memset: return "memset";
    case OpKind::EventRecord: return "event-record";
    case OpKind::StreamWait: return "stream-wait";
    case OpKind::Collective: return "collective";
    case OpKind::HostFunction: return "host-function";
    }
    return "unknown";
}

std::vector<const ApiCall*> Trace::calls_named(const std::string& name) const {
    std::vector<const ApiCall*> found;
    for (const ApiCall& call : calls)
        if (call.name == name) found.push_back(&call);
    return found;
}

std::vector<const DeviceOp*> Trace::ops_of(OpKind kind) const {
    std::vector<const DeviceOp*> found;
    for (const DeviceOp& op : ops)
        if (op.kind == kind) found.push_back(&op);
    return found;
}

std::vector<const DeviceOp*> Trace::ops_on_stream(std::uint64_t stream) const {
    std::vector<const DeviceOp*> found;
    for (const DeviceOp& op : ops)
        if (op.stream == stream) found.push_back(&op);
    return found;
}

bool overlaps(const DeviceOp& a, const DeviceOp& b, double min_us) {
    const double shared = std::min(a.end_us, b.end_us) - std::max(a.start_us, b.start_us);
    return shared > min_us;
}

namespace {

using nlohmann::json;

constexpr int kHostProcess = 0;

int device_process(int device) { return device + 1; }

std::string stream_label(std::uint64_t stream) {
    if (stream == kLegacyStream) return "legacy default stream";
    if (stream == kPerThreadStream) return "per-thread default stream";
    return "stream " + std::to_string(stream);
}

json metadata(const char* what, int pid, std::uint64_t tid, const std::string& name) {
    return json{{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json op_args(const DeviceOp& op) {
    json args{{"kind", to_string(op.kind)}, {"engine", op.engine}, {"stream", op.stream}, {"api_seq", op.api_seq}};
    if (op.bytes) args["bytes"] = op.bytes;
    if (op.src_device >= 0 || op.dst_device >= 0) {
        args["src_device"] = op.src_device;
        args["dst_device"] = op.dst_device;
    }
    if (op.threads) args["threads"] = op.threads;
    if (op.pinned_host) args["pinned_host"] = true;
    if (op.staged) args["staged"] = true;
    if (op.peer_access) args["peer_access"] = true;
    if (op.error) args["error"] = op.error;
    return args;
}

}  // namespace

std::string Trace::to_chrome_json() const {
    json events = json::array();
    std::set<int> host_threads;
    std::set<int> devices;
    std::set<std::pair<int, std::uint64_t>> tracks;

    for (const ApiCall& call : calls) {
        host_threads.insert(call.host_thread);
        json args{{"seq", call.seq}, {"device", call.device}, {"result", call.result}, {"call", call.text}};
        if (!call.file.empty()) args["site"] = call.file + ":" + std::to_string(call.line);
        events.push_back(json{{"ph", "X"},
                              {"name", call.name},
                              {"cat", "api"},
                              {"pid", kHostProcess},
                              {"tid", call.host_thread},
                              {"ts", call.begin_us},
                              {"dur", std::max(0.0, call.end_us - call.begin_us)},
                              {"args", args}});
    }

    // Work on one track normally never overlaps (a stream runs in order), but per-thread
    // default streams of several host threads share an id: overlapping ones become async
    // slices, which viewers stack instead of dropping.
    std::map<std::pair<int, std::uint64_t>, double> track_end;
    std::vector<const DeviceOp*> ordered;
    for (const DeviceOp& op : ops) ordered.push_back(&op);
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const DeviceOp* a, const DeviceOp* b) { return a->start_us < b->start_us; });
    for (const DeviceOp* op : ordered) {
        const int pid = op->device >= 0 ? device_process(op->device) : kHostProcess;
        if (op->device >= 0) devices.insert(op->device);
        const auto track = std::make_pair(pid, op->stream);
        tracks.insert(track);
        const std::string name = op->name.empty() ? to_string(op->kind) : op->name;
        auto [it, fresh] = track_end.emplace(track, op->end_us);
        const bool clashes = !fresh && op->start_us < it->second;
        if (!clashes) {
            it->second = std::max(it->second, op->end_us);
            events.push_back(json{{"ph", "X"},
                                  {"name", name},
                                  {"cat", to_string(op->kind)},
                                  {"pid", pid},
                                  {"tid", op->stream},
                                  {"ts", op->start_us},
                                  {"dur", op->end_us - op->start_us},
                                  {"args", op_args(*op)}});
        } else {
            json begin{{"ph", "b"}, {"name", name}, {"cat", to_string(op->kind)}, {"id", op->id},
                       {"pid", pid},   {"tid", op->stream}, {"ts", op->start_us}, {"args", op_args(*op)}};
            json end{{"ph", "e"}, {"name", name}, {"cat", to_string(op->kind)}, {"id", op->id},
                     {"pid", pid},   {"tid", op->stream}, {"ts", op->end_us}};
            events.push_back(std::move(begin));
            events.push_back(std::move(end));
        }
    }

    events.push_back(metadata("process_name", kHostProcess, 0, "host"));
    for (int thread : host_threads)
        events.push_back(metadata("thread_name", kHostProcess, thread, "host thread " + std::to_string(thread)));
    for (int device : devices) events.push_back(metadata("process_name", device_process(device), 0, "GPU " + std::to_string(device)));
    for (const auto& [pid, stream] : tracks)
        if (pid != kHostProcess) events.push_back(metadata("thread_name", pid, stream, stream_label(stream)));

    json document{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
    return document.dump();
}

}  // namespace mgpu::trace
