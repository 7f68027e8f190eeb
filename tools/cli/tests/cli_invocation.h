// Runs the built mgpu-cli as a user would and captures what it printed.
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

struct CliResult {
    int code = -1;
    std::string output;  // standard output and error together
};

// `arguments` and `environment` are shell words (environment as NAME=VALUE prefixes).
inline CliResult run_cli(const std::string& arguments, const std::string& environment = "") {
    const std::string command = environment + " '" MGPU_CLI_EXE "' " + arguments + " 2>&1";
    CliResult result;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> buffer{};
    std::size_t got = 0;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), got);
    int status = ::pclose(pipe);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}
