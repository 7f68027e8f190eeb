// MGPU_TRACE_FILE: the run's trace as Chrome trace JSON, written when the process exits.
#pragma once

namespace mgpu::sim::rt {

// Arranges (once per process) for the trace to be written at exit when MGPU_TRACE_FILE is set.
void export_trace_at_exit_if_asked();

// Writes the trace now (before the process ends abnormally) when MGPU_TRACE_FILE is set.
void export_trace_now_if_asked();

}  // namespace mgpu::sim::rt
