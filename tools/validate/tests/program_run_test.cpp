// What run_program adds to the judge's process runner (checker/tests/process_runner_test.cpp
// tests the runner itself): the child's environment, and the output's tail for messages.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "program_run.h"

using mgpu::validate::output_tail_in_one_line;
using mgpu::validate::ProgramRun;
using mgpu::validate::run_program;

namespace {

ProgramRun shell(const std::string& script) {
    ProgramRun run;
    run.program = "/bin/sh";
    run.arguments = {"-c", script};
    run.timeout_seconds = 600;   // a backstop only: these programs end in well under a second
    return run;
}

}  // namespace

TEST_CASE("run_program sets and unsets environment variables for the child only") {
    ::setenv("VALIDATE_TEST_UNSET_ME", "still here", 1);
    auto run = shell("echo \"[$VALIDATE_TEST_SET_ME][${VALIDATE_TEST_UNSET_ME-unset}]\"");
    run.environment_changes = {{"VALIDATE_TEST_SET_ME", std::string("0,1")}, {"VALIDATE_TEST_UNSET_ME", std::nullopt}};
    const auto outcome = run_program(run);
    CHECK(outcome.exited);
    CHECK(outcome.output == "[0,1][unset]\n");
    CHECK(std::string(std::getenv("VALIDATE_TEST_UNSET_ME")) == "still here");
    ::unsetenv("VALIDATE_TEST_UNSET_ME");
}

TEST_CASE("output_tail_in_one_line gives the last non-empty lines joined") {
    const auto outcome = run_program(shell("printf 'one\\ntwo\\n\\nthree\\n'"));
    CHECK(output_tail_in_one_line(outcome.output, 2) == "two / three");
    CHECK(output_tail_in_one_line(outcome.output, 10) == "one / two / three");
}

TEST_CASE("a run stopped by the memory or the output limit is described by that limit, not by the kill") {
    mgpu::judge::ProcessOutcome stopped;
    stopped.started = true;
    stopped.signal = 9;
    stopped.stopped_by = mgpu::judge::LimitHit::Memory;
    CHECK(mgpu::validate::describe_abnormal_end(stopped).find("memory") != std::string::npos);
    stopped.stopped_by = mgpu::judge::LimitHit::Output;
    CHECK(mgpu::validate::describe_abnormal_end(stopped).find("printing more than") != std::string::npos);
    CHECK(mgpu::validate::describe_abnormal_end(stopped).find("signal") == std::string::npos);
}
