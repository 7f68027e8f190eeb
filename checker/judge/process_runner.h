// Runs one child process under limits: wall clock, resident memory of its whole process tree,
// bytes of output, size of files it writes. The judge uses it for the compiler and for every
// test case of a checker binary. It never throws for the child's misbehaviour: everything the
// child did is in the outcome.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace mgpu::judge {

struct ProcessLimits {
    double wall_seconds = 20.0;
    // Resident memory summed over the process and its descendants. Address-space limits do not
    // fit: the simulator reserves large ranges it never touches.
    std::size_t memory_bytes = std::size_t{4} << 30;
    std::size_t output_bytes = std::size_t{8} << 20;      // stdout + stderr; the run is stopped beyond it
    std::size_t file_size_bytes = std::size_t{64} << 20;  // RLIMIT_FSIZE: no file written may grow past it
    std::size_t kept_output_bytes = std::size_t{64} << 10; // output kept: this much of the start and of the end
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
    bool timed_out = false;
    bool memory_exceeded = false;
    bool output_exceeded = false;
    std::size_t peak_memory_bytes = 0;
    std::string output;           // stdout and stderr interleaved; start and end kept when long
    std::size_t output_bytes = 0; // everything it printed, counted
    double seconds = 0.0;
};

ProcessOutcome run_process(const ProcessSpec& spec);

// "segmentation fault (SIGSEGV)" style name of a signal, for messages.
std::string describe_signal(int signal);

// The last `count` lines of a program's output, without the line ends after them: what a message
// about a run that went wrong shows of it.
std::string last_lines(const std::string& text, std::size_t count);

// The environment variable PATH of the judge, for tools such as the compiler.
std::string judge_path_variable();

}  // namespace mgpu::judge
