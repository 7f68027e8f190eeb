#include "trace_export.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "runtime_state.h"

namespace mgpu::sim::rt {

namespace {

void write_trace_file() {
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
    const char* path = std::getenv("MGPU_TRACE_FILE");
    if (path == nullptr || *path == '\0') return;
    std::call_once(registered, [] { std::atexit(write_trace_file); });
}

}  // namespace mgpu::sim::rt
