#include "program_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace mgpu::validate {

namespace {

// The child tells the parent why exec failed through a pipe that exec itself closes.
[[noreturn]] void exec_in_child(const ProgramRun& run, int output_fd, int error_pipe) {
    setpgid(0, 0);   // its own process group, so a time-out stops everything it started
    const int null_input = ::open("/dev/null", O_RDONLY);
    if (null_input >= 0) dup2(null_input, STDIN_FILENO);
    dup2(output_fd, STDOUT_FILENO);
    dup2(output_fd, STDERR_FILENO);
    for (const auto& [name, value] : run.environment_changes) {
        if (value) ::setenv(name.c_str(), value->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(run.program.c_str()));
    for (const auto& argument : run.arguments) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    ::execv(run.program.c_str(), argv.data());
    const int error = errno;
    (void)!::write(error_pipe, &error, sizeof error);
    _exit(127);
}

}  // namespace

RunOutcome run_program(const ProgramRun& run) {
    RunOutcome outcome;
    const int output_fd = ::open(run.output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (output_fd < 0) {
        outcome.start_error = "cannot write " + run.output_file + ": " + std::strerror(errno);
        return outcome;
    }
    int error_pipe[2];
    if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
        outcome.start_error = std::string("cannot make a pipe: ") + std::strerror(errno);
        ::close(output_fd);
        return outcome;
    }
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = ::fork();
    if (child < 0) {
        outcome.start_error = std::string("cannot fork: ") + std::strerror(errno);
        ::close(output_fd);
        ::close(error_pipe[0]);
        ::close(error_pipe[1]);
        return outcome;
    }
    if (child == 0) exec_in_child(run, output_fd, error_pipe[1]);
    ::close(output_fd);
    ::close(error_pipe[1]);
    int exec_error = 0;
    const ssize_t got = ::read(error_pipe[0], &exec_error, sizeof exec_error);
    ::close(error_pipe[0]);
    if (got == static_cast<ssize_t>(sizeof exec_error)) {
        ::waitpid(child, nullptr, 0);
        outcome.start_error = "cannot run " + run.program + ": " + std::strerror(exec_error);
        return outcome;
    }
    outcome.started = true;

    int status = 0;
    while (true) {
        const pid_t done = ::waitpid(child, &status, WNOHANG);
        if (done == child) break;
        if (done < 0 && errno != EINTR) break;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > run.timeout_seconds) {
            outcome.timed_out = true;
            ::kill(-child, SIGKILL);
            ::kill(child, SIGKILL);
            ::waitpid(child, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (outcome.timed_out) return outcome;
    if (WIFEXITED(status)) {
        outcome.exited = true;
        outcome.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        outcome.signal = WTERMSIG(status);
    }
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
