// The exit codes every command shares (README.md, "Exit codes").
#pragma once

#include <stdexcept>

namespace mgpu::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;        // something was checked and did not pass
inline constexpr int kExitSetupProblem = 2;  // the command could not do its job: usage, topology, build

// A mistake in how a command was called: the message says what and the caller adds where to look.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The kit itself is not in a state to run the command (a missing build output, a tool that
// is not installed). Reported with exit code 2.
struct SetupError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace mgpu::cli
