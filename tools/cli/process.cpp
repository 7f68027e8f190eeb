#include "process.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

#include "exit_codes.h"
#include "translate.h"

extern char** environ;

namespace mgpu::cli {

std::string ExitStatus::describe() const {
    if (signal == 0) return fill(tr("exit code {}"), code);
    const char* name = strsignal(signal);
    return fill(tr("signal {0} ({1})"), signal, name ? name : "unknown");
}

namespace {

std::vector<std::string> merged_environment(const std::vector<std::pair<std::string, std::string>>& overrides) {
    std::map<std::string, std::string> variables;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        std::string text = *entry;
        auto equals = text.find('=');
        if (equals == std::string::npos) continue;
        variables[text.substr(0, equals)] = text.substr(equals + 1);
    }
    for (const auto& [name, value] : overrides) variables[name] = value;
    std::vector<std::string> result;
    for (const auto& [name, value] : variables) result.push_back(name + "=" + value);
    return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    for (auto& text : strings) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    return pointers;
}

}  // namespace

pid_t spawn_process(const std::vector<std::string>& argv_in, const SpawnOptions& options) {
    if (argv_in.empty()) throw SetupError("internal: no program to start");
    std::vector<std::string> argv = argv_in;
    std::vector<std::string> environment = merged_environment(options.environment);
    std::vector<char*> argv_c = c_strings(argv);
    std::vector<char*> env_c = c_strings(environment);

    int output_fd = -1;
    if (options.output_file) {
        output_fd = ::open(options.output_file->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (output_fd < 0)
            throw SetupError("cannot write " + options.output_file->string() + ": " + std::strerror(errno));
    }
    // The child reports a failed exec through this pipe; a successful exec closes it (O_CLOEXEC).
    int exec_report[2];
    if (::pipe2(exec_report, O_CLOEXEC) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));

    pid_t pid = ::fork();
    if (pid < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGQUIT, SIG_DFL);
        if (output_fd >= 0) {
            ::dup2(output_fd, STDOUT_FILENO);
            ::dup2(output_fd, STDERR_FILENO);
        }
        ::execvpe(argv_c[0], argv_c.data(), env_c.data());
        int error = errno;
        [[maybe_unused]] auto written = ::write(exec_report[1], &error, sizeof error);
        ::_exit(127);
    }
    ::close(exec_report[1]);
    if (output_fd >= 0) ::close(output_fd);
    int child_error = 0;
    ssize_t got = ::read(exec_report[0], &child_error, sizeof child_error);
    ::close(exec_report[0]);
    if (got == static_cast<ssize_t>(sizeof child_error)) {
        ::waitpid(pid, nullptr, 0);
        throw SetupError("could not start '" + argv[0] + "': " + std::strerror(child_error));
    }
    return pid;
}

ExitStatus wait_for_process(pid_t pid) {
    // While the child runs, an interrupt from the terminal is the child's to handle.
    struct sigaction ignore {}, old_int {}, old_quit {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int);
    ::sigaction(SIGQUIT, &ignore, &old_quit);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ExitStatus result;
    if (WIFEXITED(status)) result.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    return result;
}

std::string shell_quote(const std::vector<std::string>& argv) {
    std::string line;
    for (const auto& arg : argv) {
        if (!line.empty()) line += ' ';
        bool plain = !arg.empty() && arg.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == std::string::npos;
        if (plain) {
            line += arg;
            continue;
        }
        line += '\'';
        for (char c : arg) line += (c == '\'') ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

}  // namespace mgpu::cli
