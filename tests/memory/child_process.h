// Runs a piece of test code in a forked child and reports how the child ended and what it
// wrote to stderr: the way to observe code that is supposed to kill its process.
#pragma once

#include <functional>
#include <string>

namespace memory_tests {

struct ChildOutcome {
    bool killed_by_signal = false;
    int signal_number = 0;
    int exit_code = -1;
    std::string standard_error;
};

// The child runs `body` and exits with code 0 if body returns.
ChildOutcome run_in_child(const std::function<void()>& body);

}  // namespace memory_tests
