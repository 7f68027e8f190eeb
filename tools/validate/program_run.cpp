#include "program_run.h"

#include <cstddef>
#include <sstream>

extern char** environ;

namespace mgpu::validate {

namespace {

constexpr std::size_t kMemoryLimitBytes = std::size_t{64} << 30;
constexpr std::size_t kOutputLimitBytes = std::size_t{256} << 20;

// This process's environment with the run's changes applied: the judge's runner takes the whole
// environment of the child.
std::vector<std::string> child_environment(const ProgramRun& run) {
    std::vector<std::string> environment;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        const std::string text = *entry;
        const std::string name = text.substr(0, text.find('='));
        bool changed = false;
        for (const auto& change : run.environment_changes) changed = changed || change.first == name;
        if (!changed) environment.push_back(text);
    }
    for (const auto& [name, value] : run.environment_changes)
        if (value) environment.push_back(name + "=" + *value);
    return environment;
}

}  // namespace

// The judge's process runner does the work (its own process group, a wall-clock limit that stops
// the whole tree); the limits here are loose, since conformance programs are the kit's own.
judge::ProcessOutcome run_program(const ProgramRun& run) {
    judge::ProcessSpec spec;
    spec.argv.push_back(run.program);
    spec.argv.insert(spec.argv.end(), run.arguments.begin(), run.arguments.end());
    spec.environment = child_environment(run);
    // On real GPUs a host thread may sleep while the GPU works: only the wall clock limits these.
    spec.limits.cpu_seconds = 0;
    spec.limits.blocked_seconds = 0;
    spec.limits.wall_seconds = run.timeout_seconds;
    spec.limits.memory_bytes = kMemoryLimitBytes;
    spec.limits.output_bytes = kOutputLimitBytes;
    spec.limits.file_size_bytes = std::size_t{1} << 30;
    spec.limits.kept_output_bytes = std::size_t{1} << 20;
    return judge::run_process(spec);
}

std::string describe_abnormal_end(const judge::ProcessOutcome& outcome) {
    if (!outcome.started) return "could not start: " + outcome.start_error;
    if (outcome.out_of_time()) return "stopped after " + std::to_string(static_cast<int>(outcome.seconds)) + " s (its time limit)";
    if (outcome.memory_exceeded())
        return "stopped for using more than " + std::to_string(kMemoryLimitBytes >> 30) + " GiB of memory";
    if (outcome.output_exceeded())
        return "stopped for printing more than " + std::to_string(kOutputLimitBytes >> 20) + " MiB";
    if (!outcome.exited) return "ended by " + judge::describe_signal(outcome.signal);
    return "";
}

std::string output_tail_in_one_line(const std::string& output, int count) {
    std::string non_empty;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);)
        if (line.find_first_not_of(" \t\r") != std::string::npos) non_empty += line + "\n";
    std::string tail = judge::last_lines(non_empty, static_cast<std::size_t>(count));
    for (std::size_t at = tail.find('\n'); at != std::string::npos; at = tail.find('\n', at + 3))
        tail.replace(at, 1, " / ");
    return tail;
}

}  // namespace mgpu::validate
