// A picture of what ran: a trace drawn as one self-contained HTML page with an SVG timeline
// (no scripts, no network). Every device's streams and copy engines get a lane on one time axis;
// kernels, copies, memsets, NCCL operations and host functions are boxes, the host's waits a lane
// of their own, and an event wait an arrow from the cudaEventRecord it waits for. Each box has a
// hover title (SVG <title>) with its name, start, end, bytes and link. Both backends' traces draw
// the same way; `tools/mgpu timeline` and the checker's failed overlap and ordering cases use it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "mgpu/trace.h"

namespace mgpu::trace {

struct TimelineOptions {
    std::string title = "Timeline";
    std::vector<std::string> notes;   // lines shown under the title (program, machine, schedule, finding)
    // Names each stream lane by the variable its cudaStreamCreate* call filled, read from the line of
    // the source file the trace names ("pipeline.copy_stream"); off, or a file that cannot be read,
    // leaves the trace's own name ("stream#17").
    bool read_source_names = false;
    // Source text by the file name the trace gives, read before the file system: the checker runs
    // where the student's file cannot be read, and carries its text instead (mgpu::check).
    std::map<std::string, std::string> source_texts;
};

// What the page shows, counted the way the page draws it (lanes carry data-lane="stream",
// "engine" or "host"; arrows data-arrow="event").
struct TimelineSummary {
    int devices = 0;
    int stream_lanes = 0;    // one per (device, stream) that ran device work
    int engine_lanes = 0;    // one per copy engine or link a copy used
    int host_lanes = 0;      // one per host thread that waited for the device
    int arrows = 0;          // event waits: from the record to the wait
    int boxes = 0;           // operations drawn on stream lanes
    double start_us = 0;
    double end_us = 0;
};

TimelineSummary summarize_timeline(const Trace& trace);

// The whole page. Names from the trace (kernels, files) are escaped, so any text is safe.
std::string timeline_html(const Trace& trace, const TimelineOptions& options = {});

// Text made safe for HTML and SVG, in element content and in quoted attributes.
std::string escape_html(const std::string& text);

}  // namespace mgpu::trace
