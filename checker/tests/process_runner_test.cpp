// The limits a child of the judge runs under, on small shell and coreutils programs.
#include <doctest/doctest.h>

#include <csignal>
#include <dirent.h>
#include <fstream>
#include <string>

#include "process_runner.h"
#include "sandbox.h"

using namespace mgpu::judge;

namespace {

ProcessSpec shell(const std::string& script, double seconds = 10) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", script};
    spec.environment = {"PATH=" + judge_path_variable()};
    spec.limits.wall_seconds = seconds;
    return spec;
}

// Whether any process on the machine has `marker` on its command line.
bool process_with_argument(const std::string& marker) {
    DIR* proc = opendir("/proc");
    bool found = false;
    while (dirent* entry = readdir(proc)) {
        std::ifstream file(std::string("/proc/") + entry->d_name + "/cmdline");
        std::string command((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        if (command.find(marker) != std::string::npos) found = true;
    }
    closedir(proc);
    return found;
}

}  // namespace

TEST_CASE("a child's exit status and output come back") {
    ProcessOutcome outcome = run_process(shell("echo out; echo err >&2; exit 3"));
    CHECK(outcome.started);
    CHECK(outcome.exited);
    CHECK(outcome.exit_code == 3);
    CHECK(outcome.output.find("out") != std::string::npos);
    CHECK(outcome.output.find("err") != std::string::npos);
}

TEST_CASE("a program that does not exist is reported, not run") {
    ProcessSpec spec;
    spec.argv = {"/nonexistent/mgpu-program"};
    ProcessOutcome outcome = run_process(spec);
    CHECK_FALSE(outcome.started);
    CHECK(outcome.start_error.find("No such file") != std::string::npos);
}

TEST_CASE("a child killed by a signal reports the signal") {
    ProcessOutcome outcome = run_process(shell("kill -SEGV $$"));
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGSEGV);
    CHECK(describe_signal(outcome.signal).find("segmentation fault") != std::string::npos);
}

TEST_CASE("the wall-clock limit stops a child and its children") {
    ProcessOutcome outcome = run_process(shell("sleep 123456 & sleep 123457; wait", 0.5));
    CHECK(outcome.timed_out);
    CHECK(outcome.seconds < 5);
    CHECK_FALSE(process_with_argument("123456"));
    CHECK_FALSE(process_with_argument("123457"));
}

TEST_CASE("the output limit stops a child that prints without end, keeping the start and the end") {
    ProcessSpec spec = shell("yes mgpu-line");
    spec.limits.output_bytes = 1 << 20;
    spec.limits.kept_output_bytes = 1 << 10;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.output_exceeded);
    CHECK(outcome.output_bytes > (1u << 20));
    CHECK(outcome.output.size() < 4 * 1024);
    CHECK(outcome.output.find("bytes left out") != std::string::npos);
}

TEST_CASE("the memory limit counts resident memory of the process tree") {
    // A child of the shell takes memory; the shell itself stays small.
    ProcessSpec spec = shell("while :; do dd if=/dev/zero of=/dev/null bs=700M count=1 2>/dev/null; done", 20);
    spec.limits.memory_bytes = 300u << 20;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.memory_exceeded);
    CHECK(outcome.seconds < 15);
}

TEST_CASE("a process that leaves the group does not hold the judge, and the sandbox ends it") {
    const Sandbox& sandbox = available_sandbox();
    ProcessSpec spec = shell("setsid sleep 654321 & echo started");
    const std::vector<std::string> prefix = sandbox.prefix({});
    spec.argv.insert(spec.argv.begin(), prefix.begin(), prefix.end());
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.exited);
    CHECK(outcome.seconds < 5);
    if (sandbox.kind != SandboxKind::ProcessGroup) {
        CHECK_FALSE(process_with_argument("654321"));
    }
}
