// What the parts of `validate` share: the choices of this run and running a program to read
// what it printed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kit.h"
#include "process.h"
#include "validate_report.h"

namespace mgpu::cli {

struct ValidateRun {
    Kit kit;
    bool real_is_sim = false;              // --real-side sim: the simulator stands in for the GPUs
    std::string real_topology = "hgx-h200-8";   // the machine that stands in (real_is_sim only)
    std::string model_topology = "hgx-h200-8";  // what the measurements are held against
    int gpus = 0;                          // GPUs the run uses
    bool quick = false;
    std::uint64_t seed = 0;
    std::filesystem::path work_dir;        // scratch space under the build tree

    // "0,1,...,gpus-1": narrows the simulator to the GPUs at hand.
    std::string visible_devices() const;
    // Words of the machine for the summary: "2 x NVIDIA H200" or "simulator hgx-h200-8, 2 GPUs".
    std::string machine_words;
};

struct Captured {
    ExitStatus status;
    std::string output;       // standard output and error together
    bool started = true;      // false: the program could not be started (output says why)
};

// Runs argv with `environment` added, collecting what it prints in a file under `work_dir`.
Captured capture(const ValidateRun& run, const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& environment = {});

// The last `lines` lines of a program's output, for reports of what went wrong.
std::string last_lines(const std::string& text, int lines);

}  // namespace mgpu::cli
