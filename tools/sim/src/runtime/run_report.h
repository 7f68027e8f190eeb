// What a run left behind, written when the program ends (MGPU_RUN_REPORT=FILE, set by `mgpu run`):
// streams, events, device and page-locked memory never released, device work still running at the
// end, and data races between operations on different streams. The file is JSON for the CLI,
// which explains it next to the program's own output.
#pragma once

namespace mgpu::sim::rt {

void write_run_report_at_exit_if_asked();

}  // namespace mgpu::sim::rt
