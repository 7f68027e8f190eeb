// Starting other programs (the compiler, meson, the student's program) and reporting how
// they ended in the terms a shell uses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace mgpu::cli {

struct ExitStatus {
    int code = 0;    // the exit code when the program exited
    int signal = 0;  // the signal that ended it, or 0

    bool ok() const { return signal == 0 && code == 0; }
    // What a shell would report: the code, or 128 + the signal.
    int shell_code() const { return signal != 0 ? 128 + signal : code; }
    // "exit code 3" or "signal 11 (Segmentation fault)".
    std::string describe() const;
};

struct SpawnOptions {
    // Standard output and error both go to this file; unset = inherited from the CLI.
    std::optional<std::filesystem::path> output_file{};
    // Variables to set (or override) in the program's environment.
    std::vector<std::pair<std::string, std::string>> environment{};
};

// Starts argv[0] (searched on PATH when it has no slash). Throws SetupError when it cannot be
// started, with the reason (not installed, not executable).
pid_t spawn_process(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// Waits for a child started by spawn_process. Ctrl-C reaches the child (it shares the terminal)
// while the CLI itself keeps waiting, so the child's ending is reported as it happened.
ExitStatus wait_for_process(pid_t pid);

inline ExitStatus run_process(const std::vector<std::string>& argv, const SpawnOptions& options = {}) {
    return wait_for_process(spawn_process(argv, options));
}

// The command line as a user could paste it into a shell.
std::string shell_quote(const std::vector<std::string>& argv);

}  // namespace mgpu::cli
