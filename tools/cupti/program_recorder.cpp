// Linked into a program of the user's own that `tools/mgpu timeline --backend cuda` builds with
// nvcc: the program's main is wrapped (-Wl,--wrap=main) so that the CUPTI tracer starts before it
// and what ran is written as soon as it returns, while the CUDA runtime is still there. A program
// that ends through exit() instead is written from an atexit handler, on a best-effort basis (the
// runtime's own handlers may have run before it). Where no GPU is usable the program is not run:
// the recorder says why and exits with 2.
//   MGPU_TIMELINE_FILE   the page (mgpu/timeline.h), titled MGPU_TIMELINE_TITLE
//   MGPU_TRACE_FILE      the same run as Chrome trace JSON
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <cuda_runtime.h>

#include "cupti_tracer.h"
#include "mgpu/timeline.h"

extern "C" int __real_main(int argc, char** argv);

namespace {

const char* asked(const char* variable) {
    const char* value = std::getenv(variable);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

// The GPUs by name, for the page's notes; asked only if the program used CUDA at all.
std::string devices_note() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
        cudaGetLastError();
        return "Real GPUs (CUPTI trace).";
    }
    std::string note = "Real GPUs (CUPTI trace):";
    for (int device = 0; device < count; ++device) {
        cudaDeviceProp properties{};
        if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) continue;
        note += std::string(device == 0 ? " " : ", ") + std::to_string(device) + " " + properties.name;
    }
    return note + ".";
}

void write_file(const char* path, const std::string& text, const char* variable) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        std::fprintf(stderr, "mgpu: could not write %s (%s): check that its folder exists and is writable.\n", path,
                     variable);
}

void write_once() {
    static bool written = false;
    if (written) return;
    written = true;
    mgpu::cupti::flush();
    const mgpu::trace::Trace trace = mgpu::cupti::trace();   // a copy: devices_note's own calls stay out
    if (const char* path = asked("MGPU_TIMELINE_FILE")) {
        mgpu::trace::TimelineOptions options;
        options.read_source_names = false;   // CUPTI does not say which line enqueued an operation
        if (const char* title = asked("MGPU_TIMELINE_TITLE")) options.title = title;
        options.notes.push_back(trace.calls.empty() && trace.ops.empty() ? "Real GPUs: the program made no CUDA call."
                                                                         : devices_note());
        write_file(path, mgpu::trace::timeline_html(trace, options), "MGPU_TIMELINE_FILE");
    }
    if (const char* path = asked("MGPU_TRACE_FILE")) write_file(path, trace.to_chrome_json(), "MGPU_TRACE_FILE");
}

}  // namespace

extern "C" int __wrap_main(int argc, char** argv) {
    if (!asked("MGPU_TIMELINE_FILE") && !asked("MGPU_TRACE_FILE")) return __real_main(argc, argv);
    // CUPTI cannot trace without a GPU and its driver; say so instead of failing inside CUPTI.
    int count = 0;
    if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
        std::fprintf(stderr,
                     "mgpu: no GPU can be traced here (cudaGetDeviceCount answered %d, %s), so the program was not "
                     "run. Leave out --backend cuda to draw the simulated machine's timeline instead.\n",
                     static_cast<int>(status), cudaGetErrorName(status));
        return 2;
    }
    mgpu::cupti::start();
    std::atexit(write_once);
    const int code = __real_main(argc, argv);
    write_once();
    return code;
}
