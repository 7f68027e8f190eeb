#include "child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

namespace memory_tests {

ChildOutcome run_in_child(const std::function<void()>& body) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
    const pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
        close(pipe_ends[0]);
        dup2(pipe_ends[1], STDERR_FILENO);
        close(pipe_ends[1]);
        body();
        _exit(0);
    }
    close(pipe_ends[1]);
    ChildOutcome outcome;
    char buffer[4096];
    ssize_t got = 0;
    while ((got = read(pipe_ends[0], buffer, sizeof buffer)) > 0) outcome.standard_error.append(buffer, static_cast<std::size_t>(got));
    close(pipe_ends[0]);
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) {
        outcome.killed_by_signal = true;
        outcome.signal_number = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        outcome.exit_code = WEXITSTATUS(status);
    }
    return outcome;
}

}  // namespace memory_tests
