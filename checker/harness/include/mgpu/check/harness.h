// What a lesson's doctest suite uses to talk to the judge. The checker binary of a lesson is
// its suite plus the student's file plus this harness, which owns main: it reads the run's
// key, runs the one test case the judge asked for, and writes every finding and the verdict
// to the judge's result channel, sealed. Run by hand (no judge options) it behaves as a plain doctest
// program with the console reporter.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace mgpu::check {

// One failed expectation, as the judge shows it to the student.
struct Finding {
    std::string check;      // what was checked, in plain words ("device 1 may not reach device 0")
    std::string expected;
    std::string observed;
    std::string file;       // the student's call that went wrong, when the trace knows it
    int line = 0;
    // A wrong result or value that does not say why (wrong elements, a wrong count). Reports show
    // findings that name a cause first, and a case with one before a case with symptoms only.
    bool symptom = false;
    // The lesson section that teaches the fix, when it is not the criterion's own ("3.5").
    std::string section;
};

// Records the finding and fails the current test case; the case goes on.
void fail(const Finding& finding);

// Records the finding and ends the current test case at once (later checks would only repeat it).
[[noreturn]] void fail_and_stop(const Finding& finding);

// Records the finding, ends the current case as failed and the whole checker process at once,
// from any thread: for code under test that can never go on (ranks deadlocked, a wait that never
// ends), where unwinding the case is impossible. The judge reads a failed case with its finding.
[[noreturn]] void fail_and_end_process(const Finding& finding);

// Sends a picture of what the case ran, an HTML page (mgpu/timeline.h draws one from a trace),
// for a failed overlap or ordering check: the judge writes it to a file of the case and prints its
// path under the case's findings. The last page a case sends counts; a case that passes has none.
void attach_timeline(const std::string& html);

// Describes the scenario the case runs in ("hgx-h200-8, shuffle:7, 1000003 floats"); the judge
// shows it beside every finding of the case.
void set_scenario(const std::string& description);

// Names what the case is doing now, typically the student's function it is about to call. When
// the case crashes or hangs, the judge tells the student the last step it reached.
void step(const std::string& what);

// Runs the current case again from its start in a new process that begins with this process's
// environment as it is now. The real CUDA runtime reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER
// once, when the process starts: a scenario that sets them can run on real GPUs only this way.
// Does not return when the restart happens. Otherwise it returns why it cannot restart: the case
// has already set up a scenario or reported a finding (it would run them twice), or this process
// is such a restart already.
std::string restart_case_with_environment();

// The student's source files as the judge built them into this checker: file name (as the trace
// and messages name it) -> its text. Empty for a checker built without them (run by hand).
const std::map<std::string, std::string>& student_sources();

// Marks the current case as skipped (for instance: the machine has too few GPUs). The case must
// return right after; a skipped case is never counted as passed or failed.
void skip(const std::string& reason);
bool skipped();

// The seed for this run's random inputs: chosen by the judge and printed with the results, so a
// failing run can be repeated. Fixed when the binary is run by hand without --mgpu-seed.
std::uint64_t run_seed();

// The machine the judge asked to restrict the run to ("" = every scenario runs). A case whose
// machine differs skips itself (see skip_unless_topology).
const std::string& requested_topology();

// Skips the case when the judge restricted the run to another machine; returns true if skipped.
bool skip_unless_topology(const std::string& topology);

}  // namespace mgpu::check
