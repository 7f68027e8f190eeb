// The trace drawn as an HTML page with one SVG: lanes per (device, stream), per copy engine or
// link, and per host thread that waited; boxes for device work, arrows for event waits, a time
// axis in microseconds. Plain SVG with <title> hover texts: readable with scripts off.
#include "mgpu/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace mgpu::trace {

namespace {

constexpr double kLabelWidth = 330;   // the lane names, left of the plot
constexpr double kPlotWidth = 1200;
constexpr double kRowHeight = 22;
constexpr double kLanePadding = 5;
constexpr double kAxisHeight = 40;
constexpr double kEpsilonUs = 1e-9;

std::string number(double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3f", value);
    std::string shown = text;
    while (!shown.empty() && shown.back() == '0') shown.pop_back();
    if (!shown.empty() && shown.back() == '.') shown.pop_back();
    if (shown == "-0") shown = "0";
    return shown;
}

std::string pixels(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

std::string bytes_text(std::size_t bytes) {
    std::string text = std::to_string(bytes) + " bytes";
    const char* units[] = {"KiB", "MiB", "GiB"};
    double scaled = double(bytes);
    int unit = -1;
    while (scaled >= 1024 && unit < 2) {
        scaled /= 1024;
        ++unit;
    }
    if (unit >= 0) text += " (" + number(std::round(scaled * 100) / 100) + " " + units[unit] + ")";
    return text;
}

std::string stream_name(std::uint64_t stream) {
    if (stream == kLegacyStream) return "default stream (0)";
    if (stream == kPerThreadStream) return "per-thread default stream";
    return "stream#" + std::to_string(stream);
}

std::string device_name(int device) { return device < 0 ? "host" : "GPU " + std::to_string(device); }

// Engines that move bytes: the simulator's copy engines and links, CUPTI's "copy" and "link".
bool copy_engine(const std::string& engine) {
    return engine.rfind("copy", 0) == 0 || engine.rfind("link", 0) == 0 || engine.rfind("staged", 0) == 0;
}

std::string engine_label(const std::string& engine) {
    if (engine == "copy-h2d") return "copy engine, host to device";
    if (engine == "copy-d2h") return "copy engine, device to host";
    if (engine == "copy-d2d") return "copy engine, on the device";
    if (engine.rfind("staged", 0) == 0) return engine + " (through host memory)";
    return engine;
}

// Calls during which the host waits for the device.
bool host_wait(const ApiCall& call) {
    static const std::set<std::string> waits = {
        "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyPeer",
        "cudaMemset",  "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpy2D", "cudaMemcpy3D",
        "cudaMemcpyPeer", "cudaThreadSynchronize"};
    return waits.count(call.name) > 0 && call.end_us > call.begin_us;
}

const char* css_class(const DeviceOp& op) {
    switch (op.kind) {
    case OpKind::Kernel: return "kernel";
    case OpKind::MemcpyHtoD: return "h2d";
    case OpKind::MemcpyDtoH: return "d2h";
    case OpKind::MemcpyDtoD: return "d2d";
    case OpKind::MemcpyPeer: return "peer";
    case OpKind::MemcpyHtoH: return "h2h";
    case OpKind::Memset: return "memset";
    case OpKind::Collective: return "nccl";
    case OpKind::HostFunction: return "hostfn";
    case OpKind::EventRecord: return "record";
    case OpKind::StreamWait: return "wait";
    }
    return "kernel";
}

bool marker(const DeviceOp& op) { return op.kind == OpKind::EventRecord || op.kind == OpKind::StreamWait; }

struct Item {
    double start = 0, end = 0;
    std::string name;      // shown in the box when it fits
    std::string css;
    std::string title;     // hover text
    bool is_marker = false;
    int row = 0;
};

struct Lane {
    std::string kind;      // "stream", "engine", "host"
    int device = -1;
    std::uint64_t stream = 0;
    std::string engine;
    int host_thread = 0;
    std::string label, sublabel;
    std::vector<Item> items;
    int rows = 1;
    double top = 0, height = 0;
};

struct Arrow {
    std::size_t from_lane = 0, to_lane = 0;
    double from_us = 0, to_us = 0;
    std::string title;
};

struct Layout {
    std::vector<Lane> lanes;
    std::vector<Arrow> arrows;
    std::set<int> devices;
    double t0 = 0, t1 = 0;
    int boxes = 0;
    bool empty = true;
};

std::string site_of(const ApiCall* call) {
    if (call == nullptr || call->file.empty()) return "";
    std::string file = call->file;
    const auto slash = file.find_last_of('/');
    if (slash != std::string::npos) file = file.substr(slash + 1);
    return file + ":" + std::to_string(call->line);
}

// The variable a cudaStreamCreate* call at file:line filled ("pipeline.copy_stream"), "" if unknown.
std::string created_variable(const ApiCall& call, std::map<std::string, std::vector<std::string>>& files,
                             const std::map<std::string, std::string>& texts) {
    if (call.file.empty() || call.line <= 0) return "";
    auto [it, fresh] = files.try_emplace(call.file);
    if (fresh) {
        const auto given = texts.find(call.file);
        std::istringstream text(given != texts.end() ? given->second : std::string());
        std::ifstream file;
        if (given == texts.end()) file.open(call.file);
        std::istream& in = given != texts.end() ? static_cast<std::istream&>(text) : file;
        for (std::string line; std::getline(in, line);) it->second.push_back(line);
    }
    if (static_cast<std::size_t>(call.line) > it->second.size()) return "";
    static const std::regex created(R"(cudaStreamCreate\w*\s*\(\s*&\s*([A-Za-z_][A-Za-z0-9_.\[\]]*(->[A-Za-z_][A-Za-z0-9_.\[\]]*)*))");
    std::smatch match;
    const std::string& text = it->second[std::size_t(call.line) - 1];
    if (!std::regex_search(text, match, created)) return "";
    return match[1].str();
}

class Builder {
public:
    Builder(const Trace& trace, bool read_source_names, const std::map<std::string, std::string>& texts)
        : trace_(trace) {
        for (const ApiCall& call : trace.calls) call_by_seq_[call.seq] = &call;
        for (const DeviceOp& op : trace.ops)
            if (op.api_seq) op_by_seq_.emplace(op.api_seq, &op);
        // Where each stream was created: the student knows a stream by that line.
        for (const ApiCall& call : trace.calls) {
            const auto arrow = call.text.rfind("-> stream#");
            if (arrow == std::string::npos || call.name.rfind("cudaStreamCreate", 0) != 0) continue;
            const std::uint64_t id = std::strtoull(call.text.c_str() + arrow + 10, nullptr, 10);
            created_at_.emplace(id, &call);
            if (read_source_names) {
                std::string variable = created_variable(call, source_lines_, texts);
                if (!variable.empty()) variable_of_.emplace(id, std::move(variable));
            }
        }
    }

    Layout build() {
        std::vector<const DeviceOp*> ordered;
        for (const DeviceOp& op : trace_.ops) ordered.push_back(&op);
        std::stable_sort(ordered.begin(), ordered.end(),
                         [](const DeviceOp* a, const DeviceOp* b) { return a->start_us < b->start_us; });
        for (const DeviceOp* op : ordered) {
            if (op->device < 0) {
                // A copy between two host buffers: the calling thread's lane.
                const ApiCall* call = call_of(op->api_seq);
                host_lane(call ? call->host_thread : 0).items.push_back(op_item(*op));
                continue;
            }
            layout_.devices.insert(op->device);
            stream_lane(op->device, op->stream).items.push_back(op_item(*op));
            if (!marker(*op)) ++layout_.boxes;
            if (copy_engine(op->engine)) engine_lane(op->device, op->engine).items.push_back(op_item(*op));
        }
        for (const ApiCall& call : trace_.calls) {
            if (!host_wait(call)) continue;
            Item item;
            item.start = call.begin_us;
            item.end = call.end_us;
            item.name = call.name;
            item.css = "hostwait";
            item.title = call.text.empty() ? call.name : call.text;
            item.title += "\nthe host waits from " + number(call.begin_us) + " us to " + number(call.end_us) + " us (" +
                          number(call.end_us - call.begin_us) + " us)";
            if (const std::string site = site_of(&call); !site.empty()) item.title += "\ncalled at " + site;
            host_lane(call.host_thread).items.push_back(std::move(item));
        }
        add_event_arrows();
        order_lanes();
        place();
        return std::move(layout_);
    }

private:
    const ApiCall* call_of(std::uint64_t seq) const {
        auto it = call_by_seq_.find(seq);
        return it == call_by_seq_.end() ? nullptr : it->second;
    }

    Item op_item(const DeviceOp& op) const {
        Item item;
        item.start = op.start_us;
        item.end = std::max(op.end_us, op.start_us);
        item.name = op.name.empty() ? to_string(op.kind) : op.name;
        item.css = css_class(op);
        item.is_marker = marker(op);
        std::string title = item.name + " (" + to_string(op.kind) + ")\n" + device_name(op.device) + ", " +
                            stream_name(op.stream) + "\nstart " + number(op.start_us) + " us, end " +
                            number(op.end_us) + " us (" + number(op.end_us - op.start_us) + " us)";
        if (op.bytes) title += "\n" + bytes_text(op.bytes);
        if (op.src_device >= 0 || op.dst_device >= 0 || op.kind == OpKind::MemcpyHtoD || op.kind == OpKind::MemcpyDtoH)
            title += "\nfrom " + device_name(op.src_device) + " to " + device_name(op.dst_device);
        if (!op.engine.empty() && op.engine != "compute") title += "\nengine: " + op.engine;
        if (op.staged) title += " (staged through host memory: no peer access)";
        if (op.pinned_host) title += "\nhost memory is pinned";
        if (op.threads) title += "\n" + std::to_string(op.threads) + " threads";
        if (op.peer_access) title += "\nreads or writes another GPU's memory through peer access";
        if (op.error) title += "\nfaulted with error " + std::to_string(op.error);
        const ApiCall* call = call_of(op.api_seq);
        if (const std::string site = site_of(call); !site.empty()) title += "\nenqueued at " + site;
        item.title = std::move(title);
        return item;
    }

    std::size_t lane_index(const std::tuple<std::string, int, std::uint64_t, std::string, int>& key) {
        auto it = lane_of_.find(key);
        if (it != lane_of_.end()) return it->second;
        Lane lane;
        lane.kind = std::get<0>(key);
        lane.device = std::get<1>(key);
        lane.stream = std::get<2>(key);
        lane.engine = std::get<3>(key);
        lane.host_thread = std::get<4>(key);
        if (lane.kind == "stream") {
            lane.label = device_name(lane.device) + " \u00b7 " + stream_name(lane.stream);
            auto created = created_at_.find(lane.stream);
            if (created != created_at_.end() && !site_of(created->second).empty())
                lane.sublabel = "created at " + site_of(created->second);
            auto variable = variable_of_.find(lane.stream);
            if (variable != variable_of_.end()) {
                lane.label = device_name(lane.device) + " \u00b7 " + variable->second;
                lane.sublabel = stream_name(lane.stream) + ", " + lane.sublabel;
            }
        } else if (lane.kind == "engine") {
            lane.label = device_name(lane.device) + " \u00b7 " + engine_label(lane.engine);
        } else {
            lane.label = "host thread " + std::to_string(lane.host_thread);
            lane.sublabel = "waiting for the GPUs";
        }
        layout_.lanes.push_back(std::move(lane));
        lane_of_.emplace(key, layout_.lanes.size() - 1);
        return layout_.lanes.size() - 1;
    }

    Lane& stream_lane(int device, std::uint64_t stream) { return layout_.lanes[lane_index({"stream", device, stream, "", 0})]; }
    Lane& engine_lane(int device, const std::string& engine) { return layout_.lanes[lane_index({"engine", device, 0, engine, 0})]; }
    Lane& host_lane(int thread) { return layout_.lanes[lane_index({"host", -1, 0, "", thread})]; }

    std::optional<std::size_t> existing_lane(const std::tuple<std::string, int, std::uint64_t, std::string, int>& key) const {
        auto it = lane_of_.find(key);
        if (it == lane_of_.end()) return std::nullopt;
        return it->second;
    }

    // Where an event's record took effect: the EventRecord operation (simulator), else the end of
    // the last work its stream had been given before the record (CUPTI records no marker).
    std::optional<std::pair<const DeviceOp*, double>> record_point(const ApiCall& record) const {
        auto [first, last] = op_by_seq_.equal_range(record.seq);
        for (auto it = first; it != last; ++it)
            if (it->second->kind == OpKind::EventRecord) return std::make_pair(it->second, it->second->end_us);
        const DeviceOp* before = nullptr;
        for (const DeviceOp& op : trace_.ops)
            if (op.stream == record.stream && op.api_seq < record.seq && op.device >= 0 && !marker(op) &&
                (before == nullptr || op.api_seq > before->api_seq))
                before = &op;
        if (before == nullptr) return std::nullopt;
        return std::make_pair(before, before->end_us);
    }

    std::optional<std::pair<const DeviceOp*, double>> wait_point(const ApiCall& wait) const {
        auto [first, last] = op_by_seq_.equal_range(wait.seq);
        for (auto it = first; it != last; ++it)
            if (it->second->kind == OpKind::StreamWait) return std::make_pair(it->second, it->second->end_us);
        const DeviceOp* after = nullptr;
        for (const DeviceOp& op : trace_.ops)
            if (op.stream == wait.stream && op.api_seq > wait.seq && op.device >= 0 && !marker(op) &&
                (after == nullptr || op.api_seq < after->api_seq))
                after = &op;
        if (after == nullptr) return std::nullopt;
        return std::make_pair(after, after->start_us);
    }

    void add_event_arrows() {
        std::map<long long, const ApiCall*> last_record;   // event id -> latest cudaEventRecord so far
        std::vector<const ApiCall*> calls;
        for (const ApiCall& call : trace_.calls) calls.push_back(&call);
        std::stable_sort(calls.begin(), calls.end(), [](const ApiCall* a, const ApiCall* b) { return a->seq < b->seq; });
        for (const ApiCall* call : calls) {
            if (call->result != 0) continue;
            if (call->name == "cudaEventRecord" || call->name == "cudaEventRecordWithFlags") {
                if (!call->args.empty()) last_record[call->args[0]] = call;
                continue;
            }
            const bool stream_wait = call->name == "cudaStreamWaitEvent";
            const bool host_sync = call->name == "cudaEventSynchronize";
            if (!stream_wait && !host_sync) continue;
            const std::size_t event_arg = stream_wait ? 1 : 0;
            if (call->args.size() <= event_arg) continue;
            auto record = last_record.find(call->args[event_arg]);
            if (record == last_record.end()) continue;
            const auto from = record_point(*record->second);
            if (!from) continue;
            const auto from_lane = existing_lane({"stream", from->first->device, from->first->stream, "", 0});
            if (!from_lane) continue;
            Arrow arrow;
            arrow.from_lane = *from_lane;
            arrow.from_us = from->second;
            if (stream_wait) {
                const auto to = wait_point(*call);
                if (!to) continue;
                const auto to_lane = existing_lane({"stream", to->first->device, to->first->stream, "", 0});
                if (!to_lane) continue;
                arrow.to_lane = *to_lane;
                arrow.to_us = to->second;
            } else {
                const auto to_lane = existing_lane({"host", -1, 0, "", call->host_thread});
                if (!to_lane) continue;
                arrow.to_lane = *to_lane;
                arrow.to_us = call->end_us;
            }
            arrow.title = "event recorded" + (site_of(record->second).empty() ? "" : " at " + site_of(record->second)) +
                          " (" + number(arrow.from_us) + " us), waited for by " + call->name +
                          (site_of(call).empty() ? "" : " at " + site_of(call)) + " (" + number(arrow.to_us) + " us)";
            layout_.arrows.push_back(std::move(arrow));
        }
    }

    // Host threads first, then each device's streams (in creation order) and its engines.
    void order_lanes() {
        std::vector<std::size_t> order(layout_.lanes.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        auto rank = [](const Lane& lane) {
            const int kind = lane.kind == "host" ? 0 : lane.kind == "stream" ? 1 : 2;
            return std::make_tuple(lane.kind == "host" ? -1 : lane.device, kind, lane.stream, lane.engine, lane.host_thread);
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return rank(layout_.lanes[a]) < rank(layout_.lanes[b]); });
        std::vector<std::size_t> new_index(order.size());
        std::vector<Lane> lanes;
        for (std::size_t i = 0; i < order.size(); ++i) {
            new_index[order[i]] = i;
            lanes.push_back(std::move(layout_.lanes[order[i]]));
        }
        layout_.lanes = std::move(lanes);
        for (Arrow& arrow : layout_.arrows) {
            arrow.from_lane = new_index[arrow.from_lane];
            arrow.to_lane = new_index[arrow.to_lane];
        }
    }

    // Rows inside a lane for work that overlaps there (per-thread default streams of several host
    // threads share an id), the time range and each lane's height.
    void place() {
        bool any = false;
        double t0 = 0, t1 = 0;
        double top = kAxisHeight;
        for (Lane& lane : layout_.lanes) {
            std::vector<double> row_end;
            for (Item& item : lane.items) {
                if (!any) {
                    t0 = item.start;
                    t1 = item.end;
                    any = true;
                }
                t0 = std::min(t0, item.start);
                t1 = std::max(t1, item.end);
                if (item.is_marker) continue;
                std::size_t row = 0;
                while (row < row_end.size() && row_end[row] > item.start + kEpsilonUs) ++row;
                if (row == row_end.size()) row_end.push_back(item.end);
                else row_end[row] = item.end;
                item.row = int(row);
            }
            lane.rows = std::max<int>(1, int(row_end.size()));
            lane.top = top;
            lane.height = lane.rows * kRowHeight + 2 * kLanePadding;
            top += lane.height;
        }
        layout_.empty = !any;
        // The axis starts with the first work drawn: a checker's window may begin well after 0.
        layout_.t0 = t0;
        layout_.t1 = t1 > t0 ? t1 : t0 + 1;
    }

    const Trace& trace_;
    Layout layout_;
    std::unordered_map<std::uint64_t, const ApiCall*> call_by_seq_;
    std::unordered_multimap<std::uint64_t, const DeviceOp*> op_by_seq_;
    std::map<std::uint64_t, const ApiCall*> created_at_;
    std::map<std::uint64_t, std::string> variable_of_;
    std::map<std::string, std::vector<std::string>> source_lines_;
    std::map<std::tuple<std::string, int, std::uint64_t, std::string, int>, std::size_t> lane_of_;
};

// A tick step of 1, 2 or 5 times a power of ten giving about ten ticks.
double tick_step(double span) {
    const double rough = span / 10;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    for (double factor : {1.0, 2.0, 5.0, 10.0})
        if (power * factor >= rough) return power * factor;
    return power * 10;
}

const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 1.2em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .3em 0; }
p { margin: .25em 0; }
.note { color: #444; }
.legend { list-style: none; padding: 0; margin: .6em 0; display: flex; flex-wrap: wrap; gap: .4em 1.2em; }
.legend span { display: inline-block; width: 1.1em; height: .8em; margin-right: .35em; vertical-align: middle; border: 1px solid #0003; }
.scroll { overflow-x: auto; border: 1px solid #ccc; }
svg text { font-size: 12px; font-family: system-ui, sans-serif; }
.lane-even { fill: #f6f6f6; } .lane-odd { fill: #ffffff; }
.device-line { stroke: #888; stroke-width: 1; }
.tick { stroke: #ddd; } .axis { stroke: #555; }
.label { fill: #111; } .sublabel { fill: #666; font-size: 11px; }
.box-text { fill: #fff; font-size: 11px; pointer-events: none; }
.arrow { stroke: #d62728; stroke-width: 1.4; fill: none; }
g.op:hover rect, g.op:hover path { stroke: #000; stroke-width: 1.5; }
)";

// Each kind of work: its CSS class, colour and legend text.
struct Swatch {
    const char* css;
    const char* colour;
    const char* legend;
};
const Swatch kSwatches[] = {
    {"kernel", "#4e79a7", "kernel"},          {"h2d", "#f28e2b", "copy host to device"},
    {"d2h", "#e15759", "copy device to host"}, {"d2d", "#76b7b2", "copy on one device"},
    {"peer", "#59a14f", "copy between GPUs"},  {"h2h", "#bab0ac", "copy host to host"},
    {"memset", "#b6992d", "memset"},           {"nccl", "#b07aa1", "NCCL operation"},
    {"hostfn", "#ff9da7", "host function"},    {"hostwait", "#9c755f", "host waits"},
    {"record", "#222222", "event recorded"},   {"wait", "#d62728", "stream waits for an event (arrow from its record)"},
};

}  // namespace

std::string escape_html(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

TimelineSummary summarize_timeline(const Trace& trace) {
    const Layout layout = Builder(trace, false, {}).build();
    TimelineSummary summary;
    summary.devices = int(layout.devices.size());
    for (const Lane& lane : layout.lanes) {
        if (lane.kind == "stream") ++summary.stream_lanes;
        else if (lane.kind == "engine") ++summary.engine_lanes;
        else ++summary.host_lanes;
    }
    summary.arrows = int(layout.arrows.size());
    summary.boxes = layout.boxes;
    summary.start_us = layout.t0;
    summary.end_us = layout.t1;
    return summary;
}

std::string timeline_html(const Trace& trace, const TimelineOptions& options) {
    const Layout layout = Builder(trace, options.read_source_names, options.source_texts).build();
    const TimelineSummary summary = summarize_timeline(trace);
    std::ostringstream html;
    html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << escape_html(options.title)
         << "</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>" << kStyle;
    for (const Swatch& swatch : kSwatches)
        html << "." << swatch.css << " { fill: " << swatch.colour << "; } .legend ." << swatch.css
             << " { background: " << swatch.colour << "; }\n";
    html << "</style>\n</head>\n<body>\n";
    html << "<h1>" << escape_html(options.title) << "</h1>\n";
    for (const std::string& note : options.notes) html << "<p class=\"note\">" << escape_html(note) << "</p>\n";
    if (layout.empty) {
        html << "<p class=\"summary\">No device work was recorded: the program ran no kernel, copy or memset "
                "that the trace saw.</p>\n</body>\n</html>\n";
        return html.str();
    }
    auto plural = [](int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
    html << "<p class=\"summary\">" << plural(summary.devices, "GPU", "GPUs") << ", "
         << plural(summary.stream_lanes, "stream lane", "stream lanes") << ", "
         << plural(summary.engine_lanes, "copy engine or link", "copy engines or links") << ", "
         << plural(summary.boxes, "operation", "operations") << ", " << plural(summary.arrows, "event wait", "event waits")
         << "; from " << number(layout.t0) << " us to " << number(layout.t1) << " us.</p>\n";
    html << "<ul class=\"legend\">";
    for (const Swatch& swatch : kSwatches)
        html << "<li><span class=\"" << swatch.css << "\"></span>" << swatch.legend << "</li>";
    html << "</ul>\n";

    const double height = layout.lanes.empty() ? kAxisHeight : layout.lanes.back().top + layout.lanes.back().height + 10;
    const double width = kLabelWidth + kPlotWidth + 30;
    const double span = layout.t1 - layout.t0;
    auto x = [&](double us) { return kLabelWidth + (us - layout.t0) / span * kPlotWidth; };

    html << "<div class=\"scroll\">\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << pixels(width) << "\" height=\""
         << pixels(height) << "\" viewBox=\"0 0 " << pixels(width) << " " << pixels(height)
         << "\" role=\"img\" aria-label=\"" << escape_html(options.title) << "\">\n";
    html << "<defs><marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
            "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#d62728\"/>"
            "</marker></defs>\n";

    // Lane backgrounds and names.
    int previous_device = -2;
    for (std::size_t i = 0; i < layout.lanes.size(); ++i) {
        const Lane& lane = layout.lanes[i];
        html << "<g class=\"lane\" data-lane=\"" << lane.kind << "\" data-device=\"" << lane.device << "\"";
        if (lane.kind == "stream") html << " data-stream=\"" << lane.stream << "\"";
        if (lane.kind == "engine") html << " data-engine=\"" << escape_html(lane.engine) << "\"";
        html << ">\n<rect class=\"" << (i % 2 ? "lane-odd" : "lane-even") << "\" x=\"0\" y=\"" << pixels(lane.top)
             << "\" width=\"" << pixels(width) << "\" height=\"" << pixels(lane.height) << "\"/>\n";
        const double middle = lane.top + lane.height / 2;
        if (lane.sublabel.empty()) {
            html << "<text class=\"label\" x=\"8\" y=\"" << pixels(middle + 4) << "\">" << escape_html(lane.label) << "</text>\n";
        } else {
            html << "<text class=\"label\" x=\"8\" y=\"" << pixels(middle - 2) << "\">" << escape_html(lane.label)
                 << "</text>\n<text class=\"sublabel\" x=\"8\" y=\"" << pixels(middle + 11) << "\">"
                 << escape_html(lane.sublabel) << "</text>\n";
        }
        html << "</g>\n";
        if (lane.device != previous_device && i > 0)
            html << "<line class=\"device-line\" x1=\"0\" x2=\"" << pixels(width) << "\" y1=\"" << pixels(lane.top)
                 << "\" y2=\"" << pixels(lane.top) << "\"/>\n";
        previous_device = lane.device;
    }

    // The time axis: ticks in microseconds, with grid lines through every lane.
    const double step = tick_step(span);
    html << "<g class=\"time-axis\">\n<line class=\"axis\" x1=\"" << pixels(kLabelWidth) << "\" x2=\""
         << pixels(kLabelWidth + kPlotWidth) << "\" y1=\"" << pixels(kAxisHeight - 6) << "\" y2=\""
         << pixels(kAxisHeight - 6) << "\"/>\n<text class=\"label\" x=\"8\" y=\"" << pixels(kAxisHeight - 12)
         << "\">time (\u00b5s)</text>\n";
    for (double t = std::ceil(layout.t0 / step) * step; t <= layout.t1 + step * 1e-6; t += step) {
        html << "<line class=\"tick\" x1=\"" << pixels(x(t)) << "\" x2=\"" << pixels(x(t)) << "\" y1=\""
             << pixels(kAxisHeight - 10) << "\" y2=\"" << pixels(height) << "\"/>\n<text class=\"label\" x=\""
             << pixels(x(t)) << "\" y=\"" << pixels(kAxisHeight - 14) << "\" text-anchor=\"middle\">" << number(t)
             << "</text>\n";
    }
    html << "</g>\n";

    // The work, lane by lane.
    for (const Lane& lane : layout.lanes) {
        for (const Item& item : lane.items) {
            const double y = lane.top + kLanePadding + item.row * kRowHeight;
            html << "<g class=\"op\" data-kind=\"" << item.css << "\"><title>" << escape_html(item.title) << "</title>";
            if (item.is_marker) {
                const double mx = x(item.end);
                if (item.css == "record")
                    html << "<path class=\"record\" d=\"M " << pixels(mx - 5) << " " << pixels(y) << " L "
                         << pixels(mx + 5) << " " << pixels(y) << " L " << pixels(mx) << " " << pixels(y + 8) << " z\"/>";
                else
                    html << "<rect class=\"wait\" x=\"" << pixels(mx - 1.5) << "\" y=\"" << pixels(y) << "\" width=\"3\" height=\""
                         << pixels(kRowHeight - 4) << "\"/>";
            } else {
                const double left = x(item.start);
                const double box = std::max(1.0, x(item.end) - left);
                html << "<rect class=\"" << item.css << "\" x=\"" << pixels(left) << "\" y=\"" << pixels(y + 1)
                     << "\" width=\"" << pixels(box) << "\" height=\"" << pixels(kRowHeight - 4) << "\" rx=\"2\"/>";
                const std::size_t fits = box > 24 ? std::size_t((box - 6) / 6.5) : 0;
                if (fits >= 3) {
                    std::string shown = item.name.size() <= fits ? item.name : item.name.substr(0, fits - 1) + "\u2026";
                    html << "<text class=\"box-text\" x=\"" << pixels(left + 3) << "\" y=\"" << pixels(y + 14) << "\">"
                         << escape_html(shown) << "</text>";
                }
            }
            html << "</g>\n";
        }
    }

    // Event waits: from the record to the wait.
    for (const Arrow& arrow : layout.arrows) {
        const Lane& from = layout.lanes[arrow.from_lane];
        const Lane& to = layout.lanes[arrow.to_lane];
        const double y1 = from.top + kLanePadding + 8, y2 = to.top + kLanePadding + (kRowHeight - 4) / 2;
        html << "<g class=\"op\" data-arrow=\"event\"><title>" << escape_html(arrow.title) << "</title><path class=\"arrow\" d=\"M "
             << pixels(x(arrow.from_us)) << " " << pixels(y1) << " L " << pixels(x(arrow.to_us)) << " " << pixels(y2)
             << "\" marker-end=\"url(#arrowhead)\"/></g>\n";
    }
    html << "</svg>\n</div>\n";
    html << "<p class=\"note\">Hover over a box for its name, start, end, bytes and link. Each lane is one stream of "
            "one GPU, one copy engine or link, or a host thread waiting; an arrow goes from a cudaEventRecord to the "
            "cudaStreamWaitEvent or cudaEventSynchronize that waited for it. Times are in microseconds.</p>\n";
    html << "</body>\n</html>\n";
    return html.str();
}

}  // namespace mgpu::trace
