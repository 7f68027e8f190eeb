// Runs one program to its end or to a time limit through the judge's process runner
// (checker/judge/process_runner.h), in this process's environment with some variables changed.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "process_runner.h"

namespace mgpu::validate {

struct ProgramRun {
    std::string program;                       // path
    std::vector<std::string> arguments;
    // Changes to this process's environment for the child: a value sets the variable, none unsets it.
    std::vector<std::pair<std::string, std::optional<std::string>>> environment_changes;
    double timeout_seconds = 600;
};

judge::ProcessOutcome run_program(const ProgramRun& run);

// In words, for a run that did not end by itself: "could not start: ...", "stopped after ...",
// "ended by segmentation fault (SIGSEGV)..."; "" for a run that exited (whatever its status).
std::string describe_abnormal_end(const judge::ProcessOutcome& outcome);

// The last `count` non-empty lines of a program's output on one line, " / " between them, for a
// message about a program that stopped early.
std::string output_tail_in_one_line(const std::string& output, int count);

}  // namespace mgpu::validate
