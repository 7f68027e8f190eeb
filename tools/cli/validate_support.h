// What the parts of `validate` share: the choices of this run and running a program to read
// what it printed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kit.h"
#include "process.h"          // shell_quote, for the parts that show a command
#include "process_runner.h"
#include "validate_report.h"

namespace mgpu::cli {

struct ValidateRun {
    Kit kit;
    bool real_is_sim = false;              // --real-side sim: the simulator stands in for the GPUs
    std::string real_topology = "hgx-h200-8";   // the machine that stands in (real_is_sim only)
    std::string model_topology = "hgx-h200-8";  // what the measurements are held against
    int gpus = 0;                          // GPUs the run uses
    bool quick = false;
    std::set<int> lessons;                 // --lesson: the lessons the grading part grades (empty: all)
    std::uint64_t seed = 0;
    std::filesystem::path work_dir;        // scratch space under the build tree

    // "0,1,...,gpus-1": narrows the simulator to the GPUs at hand.
    std::string visible_devices() const;
    // Words of the machine for the summary: "2 x NVIDIA H200" or "simulator hgx-h200-8, 2 GPUs".
    std::string machine_words;
};

// A program's run as the judge's runner tells it; `output` holds standard output and error together.
using Captured = judge::ProcessOutcome;

// Runs argv (argv[0] looked up in PATH when it has no slash) in this process's environment with
// `environment` set on top, its output kept in memory, stopped after kCaptureTimeLimitSeconds.
Captured capture(const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& environment = {});

// Long enough for the slowest part (conformance-compare on a full machine); a program that hangs
// still lets the other parts of the report be written.
inline constexpr double kCaptureTimeLimitSeconds = 600;

// A run that exited by itself with status 0.
bool succeeded(const Captured& run);

// How the run ended, for reports: "exit code 3", "stopped after 600 s (its time limit)",
// "ended by segmentation fault (SIGSEGV)...", "could not start: ...".
Words describe_end(const Captured& run);

using judge::last_lines;

}  // namespace mgpu::cli
