#include "trace_export.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "mgpu/sim/control.h"
#include "mgpu/timeline.h"

#include "runtime_state.h"

namespace mgpu::sim::rt {

namespace {

bool asked(const char* variable) {
    const char* value = std::getenv(variable);
    return value != nullptr && *value != '\0';
}

void write_timeline_file() {
    if (!asked("MGPU_TIMELINE_FILE")) return;
    const char* path = std::getenv("MGPU_TIMELINE_FILE");
    mgpu::trace::TimelineOptions options;
    options.read_source_names = true;   // the program's sources are where the trace says
    if (asked("MGPU_TIMELINE_TITLE")) options.title = std::getenv("MGPU_TIMELINE_TITLE");
    if (asked("MGPU_TIMELINE_NOTES")) {
        std::istringstream lines(std::getenv("MGPU_TIMELINE_NOTES"));
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) options.notes.push_back(line);
    }
    std::string html;
    {
        std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
        options.notes.push_back("Simulated machine: " + runtime().options.topology + ", " +
                                mgpu::sim::to_string(runtime().options.schedule) + " schedule.");
        html = mgpu::trace::timeline_html(runtime().trace, options);
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << html;
    if (!out)
        std::fprintf(stderr, "mgpu-sim: could not write the timeline to %s (MGPU_TIMELINE_FILE): check that its folder "
                             "exists and is writable.\n", path);
}

void write_trace_file() {
    write_timeline_file();
    const char* path = std::getenv("MGPU_TRACE_FILE");
    if (path == nullptr || *path == '\0') return;
    std::string json;
    {
        std::lock_guard<std::recursive_mutex> lock(runtime().mutex);
        json = runtime().trace.to_chrome_json();
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << json;
    if (!out)
        std::fprintf(stderr, "mgpu-sim: could not write the trace to %s (MGPU_TRACE_FILE): check that its folder exists "
                             "and is writable.\n", path);
}

}  // namespace

void export_trace_now_if_asked() { write_trace_file(); }

void export_trace_at_exit_if_asked() {
    static std::once_flag registered;
    if (!asked("MGPU_TRACE_FILE") && !asked("MGPU_TIMELINE_FILE")) return;
    std::call_once(registered, [] { std::atexit(write_trace_file); });
}

}  // namespace mgpu::sim::rt
