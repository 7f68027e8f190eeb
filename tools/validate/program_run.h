// Runs one program to its end or to a time limit, its output (stdout and stderr) into a file,
// through the judge's process runner (checker/judge/process_runner.h).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mgpu::validate {

struct ProgramRun {
    std::string program;                       // path
    std::vector<std::string> arguments;
    // Changes to this process's environment for the child: a value sets the variable, none unsets it.
    std::vector<std::pair<std::string, std::optional<std::string>>> environment_changes;
    std::string output_file;
    double timeout_seconds = 600;
};

struct RunOutcome {
    bool started = false;
    std::string start_error;
    bool exited = false;       // ended by itself, with exit_code
    int exit_code = -1;
    int signal = 0;            // the signal that ended it, when it did not exit by itself
    bool timed_out = false;
    double seconds = 0;
};

RunOutcome run_program(const ProgramRun& run);

// In words, for a run that did not end by itself: "could not start: ...", "killed by ...", ...;
// "" for a run that exited (whatever its status).
std::string describe_abnormal_end(const RunOutcome& outcome);

// The last `count` non-empty lines of a file, for messages about a program that stopped early.
std::string last_lines(const std::string& path, int count);

}  // namespace mgpu::validate
