// Runs one child process under limits: CPU time and resident memory of its whole process tree,
// time spent blocked, bytes of output, size of files it writes, and the wall clock as a backstop.
// The judge uses it for the compiler and for every test case of a checker binary. It never
// throws for the child's misbehaviour: everything the child did is in the outcome.
//
// Why CPU time: what a program costs in CPU time hardly changes with how busy the machine is, so
// a limit on it means the same on a laptop running other work as on an idle grading server. A
// program that waits for something that never comes (a deadlock, a sleep) uses no CPU at all; the
// blocked-time limit ends it. The wall clock only catches a machine so busy that the program could
// not get the CPU it was ready to use: that is no fault of the program, and the outcome says so.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mgpu::judge {

// Which limit ended a run.
enum class LimitHit {
    None,
    CpuTime,      // the tree used more CPU time than cpu_seconds
    Blocked,      // no thread of the tree ran or was ready to run for blocked_seconds in all
    WallClock,    // the backstop: the machine was too busy to give the tree the CPU it was ready to use
    Memory,
    Output,
    Processes,    // the tree started more processes than max_processes, or the kernel refused a fork at max_tasks
};

// "CPU time", "blocked time", ... for messages.
const char* to_string(LimitHit limit);

struct ProcessLimits {
    // CPU time (user + system) summed over the process and its descendants, ended ones included.
    // 0 = no limit.
    double cpu_seconds = 20.0;
    // Time in which no thread of the tree was running, ready to run or waiting for the disk, summed
    // over the run. 0 = no limit.
    double blocked_seconds = 10.0;
    // The backstop; 0 = ten times the CPU limit, and at least 60 s.
    double wall_seconds = 0.0;
    // Resident memory summed over the process and its descendants. Address-space limits do not
    // fit: the simulator reserves large ranges it never touches.
    std::size_t memory_bytes = std::size_t{4} << 30;
    std::size_t output_bytes = std::size_t{8} << 20;      // stdout + stderr; the run is stopped beyond it
    std::size_t file_size_bytes = std::size_t{64} << 20;  // RLIMIT_FSIZE: no file written may grow past it
    std::size_t kept_output_bytes = std::size_t{64} << 10; // output kept: this much of the start and of the end
    std::size_t open_files = 512;                         // RLIMIT_NOFILE; 0 = the judge's own
    // Processes of the tree at once, counted by the judge (0 = no limit), and tasks (threads
    // included) the kernel allows the tree where a pids cgroup can be made (process_count_cgroup.h):
    // the cgroup stops a fork bomb at once, the judge's count names it and ends it.
    std::size_t max_processes = 64;
    std::size_t max_tasks = 512;
};

struct ProcessSpec {
    std::vector<std::string> argv;              // argv[0] is run as given (a path, or a name looked up in PATH)
    std::vector<std::string> environment;       // the complete environment, "NAME=value"
    std::string working_dir;                    // "" = the judge's own
    std::vector<std::pair<int, int>> extra_fds; // {descriptor in the child, descriptor of the judge}; at most 8
    ProcessLimits limits;
};

struct ProcessOutcome {
    bool started = false;
    std::string start_error;      // why the program could not be started
    bool exited = false;          // ended by itself with exit_code (else: by a signal, or killed by us)
    int exit_code = -1;
    int signal = 0;               // the signal that ended it, when it did not exit
    LimitHit stopped_by = LimitHit::None;
    bool memory_exceeded() const { return stopped_by == LimitHit::Memory; }
    bool output_exceeded() const { return stopped_by == LimitHit::Output; }
    bool too_many_processes() const { return stopped_by == LimitHit::Processes; }
    // Stopped by a limit on time of any kind: CPU, blocked or the wall clock.
    bool out_of_time() const {
        return stopped_by == LimitHit::CpuTime || stopped_by == LimitHit::Blocked || stopped_by == LimitHit::WallClock;
    }
    std::size_t peak_memory_bytes = 0;
    std::size_t peak_processes = 0;
    double cpu_seconds = 0.0;     // CPU time of the tree, as far as it was seen
    double blocked_seconds = 0.0; // time the tree spent blocked
    std::string output;           // stdout and stderr interleaved; start and end kept when long
    std::size_t output_bytes = 0; // everything it printed, counted
    double seconds = 0.0;         // wall clock
};

// The wall-clock backstop that `limits` gives.
double wall_backstop_seconds(const ProcessLimits& limits);

ProcessOutcome run_process(const ProcessSpec& spec);

// "segmentation fault (SIGSEGV)" style name of a signal, for messages.
std::string describe_signal(int signal);

// The last `count` lines of a program's output, without the line ends after them: what a message
// about a run that went wrong shows of it.
std::string last_lines(const std::string& text, std::size_t count);

// The environment variable PATH of the judge, for tools such as the compiler.
std::string judge_path_variable();

}  // namespace mgpu::judge
