// Runs one registered probe (probe_hook.h) in a new process of this same program, with some
// environment variables set or unset from its start, and returns how it ended and what it printed.
// A new process, not a fork: the CUDA runtime does not support a child forked after its start.
#pragma once

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "probe_hook.h"

extern char** environ;

namespace conformance {

struct EnvironmentChange {
    const char* name;
    const char* value;   // nullptr: unset
};

struct ProbeRun {
    int wait_status = 0;   // as waitpid gave it
    std::string printed;   // the probe's stdout
    bool exited_with(int code) const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == code; }
};

inline ProbeRun run_in_fresh_process(const std::string& probe, const std::vector<EnvironmentChange>& changes = {}) {
    std::vector<std::string> environment;
    for (char** entry = environ; *entry; ++entry) environment.emplace_back(*entry);
    for (const EnvironmentChange& change : changes) {
        const std::string prefix = std::string(change.name) + "=";
        std::erase_if(environment, [&](const std::string& entry) { return entry.rfind(prefix, 0) == 0; });
        if (change.value) environment.push_back(prefix + change.value);
    }
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);

    int out[2];
    REQUIRE_MESSAGE(::pipe(out) == 0, "no pipe to a new process");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string program = "/proc/self/exe";
    std::string argument = kProbeArgument;
    std::string name = probe;
    char* argv[] = {program.data(), argument.data(), name.data(), nullptr};
    pid_t child = -1;
    const int spawned = posix_spawn(&child, program.c_str(), &actions, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; spawned == 0 && (n = ::read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
    ::close(out[0]);
    int status = 0;
    if (spawned == 0) ::waitpid(child, &status, 0);
    REQUIRE_MESSAGE(spawned == 0, "could not start a new process of this program");
    return {status, text};
}

// What the probe printed, when it exited with status 0.
inline std::string answer_of_fresh_process(const std::string& probe, const std::vector<EnvironmentChange>& changes) {
    const ProbeRun run = run_in_fresh_process(probe, changes);
    REQUIRE_MESSAGE(run.exited_with(0), "the probe ", probe, " failed: ", run.printed);
    return run.printed;
}

}  // namespace conformance
