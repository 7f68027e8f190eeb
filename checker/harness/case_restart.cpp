// restart_case_with_environment: the same checker binary, the same case, a new process. The judge
// keeps reading the same result descriptor; only the key (and the next record's place) needs a
// new way in, since the student's code must never see it: a fresh pipe, read and closed by the
// new process before any case starts.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mgpu/check/harness.h"
#include "result_channel.h"

namespace mgpu::check {

std::string restart_case_with_environment() {
    const detail::RunSettings& run = detail::settings();
    const detail::CaseState& state = detail::current_case();
    if (run.restarted) return "this process was already started again for one scenario of the case";
    if (state.scenarios > 0 || state.findings > 0)
        return "the case ran another scenario in this process first";
    if (run.argv.empty()) return "the checker's command line is unknown";

    std::vector<std::string> arguments;
    int key_pipe[2] = {-1, -1};
    if (detail::judge_attached()) {
        if (::pipe(key_pipe) != 0) return std::string("no pipe for the restart: ") + std::strerror(errno);
        if (!detail::hand_channel_on(key_pipe[1])) {
            ::close(key_pipe[0]);
            ::close(key_pipe[1]);
            return "the restart could not pass the run's key on";
        }
        ::close(key_pipe[1]);
    }
    for (const std::string& argument : run.argv) {
        if (argument.rfind("--mgpu-key-fd=", 0) == 0) {
            if (key_pipe[0] >= 0) arguments.push_back("--mgpu-key-fd=" + std::to_string(key_pipe[0]));
            continue;
        }
        arguments.push_back(argument);
    }
    arguments.insert(arguments.begin() + 1, "--mgpu-restarted");
    std::vector<char*> pointers;
    for (std::string& argument : arguments) pointers.push_back(argument.data());
    pointers.push_back(nullptr);

    std::fflush(nullptr);
    ::execv("/proc/self/exe", pointers.data());   // the environment is the current one, as changed
    const std::string reason = std::string("the checker could not start itself again: ") + std::strerror(errno);
    if (key_pipe[0] >= 0) ::close(key_pipe[0]);
    return reason;
}

}  // namespace mgpu::check
