#include <doctest/doctest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "program_run.h"

using mgpu::validate::describe_abnormal_end;
using mgpu::validate::last_lines;
using mgpu::validate::ProgramRun;
using mgpu::validate::run_program;

namespace {

std::string output_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("validate-run-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

ProgramRun shell(const std::string& script, const std::string& name) {
    ProgramRun run;
    run.program = "/bin/sh";
    run.arguments = {"-c", script};
    run.output_file = output_path(name);
    run.timeout_seconds = 20;
    return run;
}

}  // namespace

TEST_CASE("run_program reports the exit status and keeps stdout and stderr in the output file") {
    const auto run = shell("echo to-stdout; echo to-stderr >&2; exit 3", "status");
    const auto outcome = run_program(run);
    CHECK(outcome.started);
    CHECK(outcome.exited);
    CHECK(outcome.exit_code == 3);
    CHECK_FALSE(outcome.timed_out);
    CHECK(describe_abnormal_end(outcome).empty());
    const std::string output = read_all(run.output_file);
    CHECK(output.find("to-stdout") != std::string::npos);
    CHECK(output.find("to-stderr") != std::string::npos);
    std::filesystem::remove(run.output_file);
}

TEST_CASE("run_program tells a program ended by a signal") {
    const auto run = shell("kill -SEGV $$", "signal");
    const auto outcome = run_program(run);
    CHECK(outcome.started);
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGSEGV);
    CHECK(describe_abnormal_end(outcome).rfind("ended by signal " + std::to_string(SIGSEGV), 0) == 0);
    std::filesystem::remove(run.output_file);
}

TEST_CASE("run_program stops a program at its time limit") {
    auto run = shell("sleep 30", "timeout");
    run.timeout_seconds = 0.3;
    const auto outcome = run_program(run);
    CHECK(outcome.started);
    CHECK(outcome.timed_out);
    CHECK(outcome.seconds < 10);
    CHECK(describe_abnormal_end(outcome).find("time limit") != std::string::npos);
    std::filesystem::remove(run.output_file);
}

TEST_CASE("run_program says why a program could not start") {
    ProgramRun run;
    run.program = "/nonexistent/conformance-program";
    run.output_file = output_path("missing");
    const auto outcome = run_program(run);
    CHECK_FALSE(outcome.started);
    CHECK(outcome.start_error.find("/nonexistent/conformance-program") != std::string::npos);
    CHECK(describe_abnormal_end(outcome).rfind("could not start: ", 0) == 0);
    std::filesystem::remove(run.output_file);
}

TEST_CASE("run_program sets and unsets environment variables for the child only") {
    ::setenv("VALIDATE_TEST_UNSET_ME", "still here", 1);
    auto run = shell("echo \"[$VALIDATE_TEST_SET_ME][${VALIDATE_TEST_UNSET_ME-unset}]\"", "environment");
    run.environment_changes = {{"VALIDATE_TEST_SET_ME", std::string("0,1")}, {"VALIDATE_TEST_UNSET_ME", std::nullopt}};
    const auto outcome = run_program(run);
    CHECK(outcome.exited);
    CHECK(read_all(run.output_file) == "[0,1][unset]\n");
    CHECK(std::string(std::getenv("VALIDATE_TEST_UNSET_ME")) == "still here");
    ::unsetenv("VALIDATE_TEST_UNSET_ME");
    std::filesystem::remove(run.output_file);
}

TEST_CASE("last_lines gives the last non-empty lines joined") {
    const auto run = shell("printf 'one\\ntwo\\n\\nthree\\n'", "lines");
    run_program(run);
    CHECK(last_lines(run.output_file, 2) == "two / three");
    CHECK(last_lines(run.output_file, 10) == "one / two / three");
    std::filesystem::remove(run.output_file);
}
