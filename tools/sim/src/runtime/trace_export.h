// MGPU_TRACE_FILE: the run's trace as Chrome trace JSON; MGPU_TIMELINE_FILE: the same run drawn as
// an HTML page (mgpu/timeline.h), titled MGPU_TIMELINE_TITLE with the lines of MGPU_TIMELINE_NOTES
// under it. Both are written when the process exits.
#pragma once

namespace mgpu::sim::rt {

// Arranges (once per process) for the files to be written at exit when either variable is set.
void export_trace_at_exit_if_asked();

// Writes them now (before the process ends abnormally) when either variable is set.
void export_trace_now_if_asked();

}  // namespace mgpu::sim::rt
