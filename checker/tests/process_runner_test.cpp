// The limits a child of the judge runs under, on small shell and coreutils programs.
#include <doctest/doctest.h>

#include <csignal>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "process_runner.h"
#include "process_table.h"
#include "sandbox.h"

using namespace mgpu::judge;
using checker_tests::process_remains;

namespace {

ProcessSpec shell(const std::string& script, double cpu_seconds = 10) {
    ProcessSpec spec;
    spec.argv = {"sh", "-c", script};
    spec.environment = {"PATH=" + judge_path_variable()};
    spec.limits.cpu_seconds = cpu_seconds;
    return spec;
}

// Processes that keep the cores busy while a test runs, ended when it goes out of scope.
struct BusyMachine {
    std::vector<pid_t> hogs;
    explicit BusyMachine(int count) {
        for (int i = 0; i < count; ++i) {
            pid_t pid = ::fork();
            if (pid == 0) {
                for (volatile unsigned long spin = 0;; spin = spin + 1) {
                }
            }
            if (pid > 0) hogs.push_back(pid);
        }
    }
    ~BusyMachine() {
        for (pid_t pid : hogs) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

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

TEST_CASE("the CPU-time limit stops an endless loop, whatever else the machine is doing") {
    BusyMachine busy(3);
    ProcessOutcome outcome = run_process(shell("while :; do :; done", 0.5));
    CHECK(outcome.stopped_by == LimitHit::CpuTime);
    CHECK(outcome.out_of_time());
    CHECK(outcome.cpu_seconds >= 0.5);
    CHECK(outcome.cpu_seconds < 5);
}

TEST_CASE("the CPU-time limit sums the CPU time of every process of the tree") {
    // Two loops, each far under the limit on its own; a child that ends early still counts.
    ProcessOutcome outcome = run_process(
        shell("(i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done) ; (while :; do :; done) & (while :; do :; done) & wait",
              1.0));
    CHECK(outcome.stopped_by == LimitHit::CpuTime);
    CHECK(outcome.cpu_seconds >= 1.0);
}

TEST_CASE("a child that waits for nothing is stopped by the blocked-time limit, with its children") {
    ProcessSpec spec = shell("sleep 123456 & sleep 123457; wait");
    spec.limits.blocked_seconds = 0.5;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.stopped_by == LimitHit::Blocked);
    CHECK(outcome.blocked_seconds >= 0.5);
    CHECK(outcome.cpu_seconds < 0.5);
    CHECK_FALSE(process_remains("123456"));
    CHECK_FALSE(process_remains("123457"));
}

TEST_CASE("blocked time adds up over a run: a loop of short sleeps is stopped too") {
    ProcessSpec spec = shell("while :; do sleep 0.05; done");
    spec.limits.blocked_seconds = 1.0;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.stopped_by == LimitHit::Blocked);
}

TEST_CASE("a program busy on the CPU is never blocked, even on a machine with every core taken") {
    BusyMachine busy(4);
    ProcessSpec spec = shell("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done");
    spec.limits.blocked_seconds = 0.5;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.stopped_by == LimitHit::None);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.blocked_seconds < 0.5);
}

TEST_CASE("the wall clock is only a backstop, and says so") {
    ProcessSpec spec = shell("sleep 123458");
    spec.limits.blocked_seconds = 0;
    spec.limits.wall_seconds = 0.5;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.stopped_by == LimitHit::WallClock);
    CHECK(std::string(to_string(outcome.stopped_by)) == "wall-clock backstop");
    CHECK(outcome.seconds < 60);   // far from the sleep's end: the judge did not wait for it
    CHECK_FALSE(process_remains("123458"));
    // Unless given, the backstop is far above the CPU limit.
    ProcessLimits limits;
    limits.cpu_seconds = 20;
    CHECK(wall_backstop_seconds(limits) >= 200);
}

TEST_CASE("the output limit stops a child that prints without end, keeping the start and the end") {
    ProcessSpec spec = shell("yes mgpu-line");
    spec.limits.output_bytes = 1 << 20;
    spec.limits.kept_output_bytes = 1 << 10;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.output_exceeded());
    CHECK(outcome.output_bytes > (1u << 20));
    CHECK(outcome.output.size() < 4 * 1024);
    CHECK(outcome.output.find("bytes left out") != std::string::npos);
}

TEST_CASE("the memory limit counts resident memory of the process tree") {
    // A child of the shell takes memory; the shell itself stays small.
    ProcessSpec spec = shell("while :; do dd if=/dev/zero of=/dev/null bs=700M count=1 2>/dev/null; done", 20);
    spec.limits.memory_bytes = 300u << 20;
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.memory_exceeded());
}

TEST_CASE("a process that leaves the group does not hold the judge, and the sandbox ends it") {
    const Sandbox& sandbox = available_sandbox();
    if (sandbox.kind == SandboxKind::ProcessGroup) {
        MESSAGE("no PID namespace on this machine: a process that calls setsid cannot be ended here");
        return;
    }
    ProcessSpec spec = shell("setsid sleep 65.4321 & echo started");
    const std::vector<std::string> prefix = sandbox.prefix({});
    spec.argv.insert(spec.argv.begin(), prefix.begin(), prefix.end());
    ProcessOutcome outcome = run_process(spec);
    CHECK(outcome.exited);
    CHECK(outcome.seconds < 60);   // the sleep would take 65
    CHECK_FALSE(process_remains("65.4321"));
}

TEST_CASE("descriptors handed to the child land where asked, even when their numbers cross") {
    // The judge's descriptor 200 must become the child's 201 and 201 the child's 200: placing the
    // first must not overwrite the second before it is placed.
    int first[2], second[2];
    REQUIRE(::pipe(first) == 0);
    REQUIRE(::pipe(second) == 0);
    REQUIRE(::dup2(first[0], 200) == 200);
    REQUIRE(::dup2(second[0], 201) == 201);
    REQUIRE(::write(first[1], "from-200\n", 9) == 9);
    REQUIRE(::write(second[1], "from-201\n", 9) == 9);
    for (int fd : {first[0], first[1], second[0], second[1]}) ::close(fd);
    ProcessSpec spec;
    spec.argv = {"bash", "-c", "head -n1 <&201; head -n1 <&200"};
    spec.environment = {"PATH=" + judge_path_variable()};
    spec.extra_fds = {{201, 200}, {200, 201}};
    ProcessOutcome outcome = run_process(spec);
    ::close(200);
    ::close(201);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.output == "from-200\nfrom-201\n");
}
