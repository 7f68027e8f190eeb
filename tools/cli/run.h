// Building and running a program for the simulator as `run` does, for the commands that run a
// program in the same way and want something more from the run (`timeline`: its picture).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "kit.h"
#include "program_build.h"

namespace mgpu::cli {

struct RunSetup {
    std::string command = "run";   // names the messages: "mgpu run: ..."
    std::vector<std::pair<std::string, std::string>> environment{};   // more variables for the program
    bool suggest_next = true;      // a lesson that ran cleanly: the machines and schedules worth a try
};

struct RunOutcome {
    int exit_code = 0;             // what `run` answers: the program's own, or 1 for what the simulator saw
    std::string machine;           // the topology it ran on
    std::string schedule;
    std::string label;             // what was built ("exercises/03-peer-to-peer", "main.cu")
    bool ran = false;              // false: it did not build
};

// -I and -D as `run` takes them, checked. Throws UsageError.
CompileOptions compile_options_of(const ParsedArgs& args);

// `args` as `run` takes them (positionals, -I, -D, --topology, --schedule, --trace, --keep-exit-code,
// --fail-on-findings, and the program's arguments after --). Throws UsageError and SetupError as `run` does.
RunOutcome run_program(const Kit& kit, const ParsedArgs& args, const RunSetup& setup);

}  // namespace mgpu::cli
