#include "program_run.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "process_runner.h"

extern char** environ;

namespace mgpu::validate {

namespace {

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
RunOutcome run_program(const ProgramRun& run) {
    judge::ProcessSpec spec;
    spec.argv.push_back(run.program);
    spec.argv.insert(spec.argv.end(), run.arguments.begin(), run.arguments.end());
    spec.environment = child_environment(run);
    spec.limits.wall_seconds = run.timeout_seconds;
    spec.limits.memory_bytes = std::size_t{64} << 30;
    spec.limits.output_bytes = std::size_t{256} << 20;
    spec.limits.file_size_bytes = std::size_t{1} << 30;
    spec.limits.kept_output_bytes = std::size_t{1} << 20;
    const judge::ProcessOutcome ran = judge::run_process(spec);

    RunOutcome outcome;
    outcome.started = ran.started;
    outcome.start_error = ran.start_error;
    outcome.timed_out = ran.timed_out;
    outcome.exited = ran.exited && !ran.timed_out;
    outcome.exit_code = ran.exit_code;
    outcome.signal = ran.timed_out ? 0 : ran.signal;
    outcome.seconds = ran.seconds;
    std::ofstream output(run.output_file, std::ios::binary | std::ios::trunc);
    output << ran.output;
    if (!output && outcome.started && outcome.start_error.empty())
        outcome.start_error = "cannot write " + run.output_file + ": " + std::strerror(errno);
    return outcome;
}

std::string describe_abnormal_end(const RunOutcome& outcome) {
    if (!outcome.started) return "could not start: " + outcome.start_error;
    if (outcome.timed_out) return "stopped after " + std::to_string(static_cast<int>(outcome.seconds)) + " s (its time limit)";
    if (!outcome.exited) {
        const char* name = ::strsignal(outcome.signal);
        return "ended by signal " + std::to_string(outcome.signal) + (name ? std::string(" (") + name + ")" : "");
    }
    return "";
}

std::string last_lines(const std::string& path, int count) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    std::string out;
    const std::size_t first = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0;
    for (std::size_t i = first; i < lines.size(); ++i) out += (out.empty() ? "" : " / ") + lines[i];
    return out;
}

}  // namespace mgpu::validate
