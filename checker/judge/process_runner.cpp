#include "process_runner.h"

#include "process_count_cgroup.h"

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <memory>
#include <vector>
#include <poll.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mgpu::judge {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollMilliseconds = 25;
// How often the tree's memory, CPU time and thread states are read (a scan of /proc).
constexpr int kSampleMilliseconds = 50;

struct ProcEntry {
    pid_t parent = 0;
    char state = '?';
    std::size_t resident_bytes = 0;
    unsigned long long cpu_ticks = 0;   // utime + stime + cutime + cstime: its own and its reaped children's
};

// The fields after the command name of a /proc/.../stat line (which is in parentheses and may
// itself contain spaces and parentheses), from field 3 (state) on.
bool stat_fields_after_name(const std::string& path, std::vector<std::string>* fields) {
    std::ifstream stat_file(path);
    std::string stat_line;
    if (!std::getline(stat_file, stat_line)) return false;
    std::size_t close = stat_line.rfind(')');
    if (close == std::string::npos || close + 2 > stat_line.size()) return false;
    std::istringstream stream(stat_line.substr(close + 2));
    fields->clear();
    std::string field;
    while (stream >> field) fields->push_back(field);
    return fields->size() >= 22;
}

// Every process on the machine with its parent, state, resident size and CPU time, from /proc.
std::map<pid_t, ProcEntry> read_process_table() {
    std::map<pid_t, ProcEntry> table;
    static const long page_size = ::sysconf(_SC_PAGESIZE);
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return table;
    std::vector<std::string> fields;
    while (dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0') continue;
        if (!stat_fields_after_name(std::string("/proc/") + entry->d_name + "/stat", &fields)) continue;
        // fields[0] is field 3 of proc(5): state; [1] ppid; [11..14] utime, stime, cutime, cstime; [21] rss.
        ProcEntry row;
        row.state = fields[0].empty() ? '?' : fields[0][0];
        row.parent = static_cast<pid_t>(std::strtol(fields[1].c_str(), nullptr, 10));
        for (int i = 11; i <= 14; ++i) row.cpu_ticks += std::strtoull(fields[i].c_str(), nullptr, 10);
        row.resident_bytes = static_cast<std::size_t>(std::strtol(fields[21].c_str(), nullptr, 10)) * page_size;
        table[static_cast<pid_t>(pid)] = row;
    }
    ::closedir(proc);
    return table;
}

std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, ProcEntry>& table) {
    std::multimap<pid_t, pid_t> children;
    for (const auto& [pid, entry] : table) children.emplace(entry.parent, pid);
    std::vector<pid_t> found{root};
    for (std::size_t i = 0; i < found.size(); ++i) {
        auto range = children.equal_range(found[i]);
        for (auto it = range.first; it != range.second; ++it) found.push_back(it->second);
    }
    return found;
}

// Whether a thread in this state is doing the program's work or is ready to (R), or waits for
// the disk (D); anything else (S, T, t, Z, ...) is waiting for something the program itself asked for.
bool making_progress(char state) { return state == 'R' || state == 'D'; }

// Whether any thread of the process is running, ready to run or waiting for the disk. The
// process's own state is only its main thread's: a program whose main thread waits for workers
// that compute is not blocked.
bool any_thread_progressing(pid_t pid) {
    const std::string tasks_dir = "/proc/" + std::to_string(pid) + "/task";
    DIR* tasks = ::opendir(tasks_dir.c_str());
    if (tasks == nullptr) return false;
    bool progressing = false;
    std::vector<std::string> fields;
    while (dirent* entry = ::readdir(tasks)) {
        if (entry->d_name[0] == '.') continue;
        if (stat_fields_after_name(tasks_dir + "/" + entry->d_name + "/stat", &fields) && !fields[0].empty() &&
            making_progress(fields[0][0])) {
            progressing = true;
            break;
        }
    }
    ::closedir(tasks);
    return progressing;
}

struct TreeSample {
    std::size_t resident_bytes = 0;
    double cpu_seconds = 0;
    bool progressing = false;
    std::size_t processes = 0;
};

TreeSample sample_tree(pid_t root) {
    static const double ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
    auto table = read_process_table();
    TreeSample sample;
    unsigned long long ticks = 0;
    for (pid_t pid : descendants_of(root, table)) {
        auto it = table.find(pid);
        if (it == table.end()) continue;
        ++sample.processes;
        sample.resident_bytes += it->second.resident_bytes;
        ticks += it->second.cpu_ticks;
        if (!sample.progressing) {
            sample.progressing = making_progress(it->second.state) || any_thread_progressing(pid);
        }
    }
    sample.cpu_seconds = static_cast<double>(ticks) / ticks_per_second;
    return sample;
}

// Kills the child's process group and every descendant, including ones that left the group.
void kill_tree(pid_t root) {
    ::kill(-root, SIGKILL);
    auto table = read_process_table();
    for (pid_t pid : descendants_of(root, table)) ::kill(pid, SIGKILL);
}

// Keeps the first and the last `keep` bytes of a stream.
struct OutputKeeper {
    std::size_t keep = 0;
    std::string head, tail;
    std::size_t total = 0;

    void add(const char* data, std::size_t size) {
        total += size;
        std::size_t to_head = std::min(size, keep - std::min(keep, head.size()));
        head.append(data, to_head);
        if (to_head < size) {
            tail.append(data + to_head, size - to_head);
            if (tail.size() > 2 * keep) tail.erase(0, tail.size() - keep);
        }
    }

    std::string text() const {
        std::string end = tail.size() > keep ? tail.substr(tail.size() - keep) : tail;
        if (head.size() + end.size() >= total) return head + end;
        return head + "\n[... " + std::to_string(total - head.size() - end.size()) + " bytes left out ...]\n" + end;
    }
};

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    for (auto& text : strings) pointers.push_back(text.data());
    pointers.push_back(nullptr);
    return pointers;
}

// Between fork and exec only async-signal-safe calls are allowed: everything is prepared before.
// The decimal digits of a pid, without the allocation std::to_string might make.
void write_pid(int fd, pid_t pid) {
    char digits[24];
    int at = sizeof digits;
    do {
        digits[--at] = static_cast<char>('0' + pid % 10);
        pid /= 10;
    } while (pid > 0 && at > 0);
    [[maybe_unused]] auto written = ::write(fd, digits + at, sizeof digits - at);
}

[[noreturn]] void exec_child(const ProcessSpec& spec, int output_fd, int error_report_fd, char** argv, char** envp,
                             const char* cgroup_procs) {
    ::setpgid(0, 0);
    // Into the pids cgroup before exec, so that nothing the program starts escapes its cap.
    if (cgroup_procs != nullptr) {
        int procs = ::open(cgroup_procs, O_WRONLY | O_CLOEXEC);
        if (procs >= 0) {
            write_pid(procs, ::getpid());
            ::close(procs);
        }
    }
    // First move every descriptor the child needs above the range of the targets, so that placing
    // one (say the result file on 3) cannot overwrite another still waiting to be placed (the
    // nonce pipe, open on 3 in the judge). The moved copies close themselves at exec.
    constexpr int kHigh = 100;
    constexpr std::size_t kMaxExtra = 8;
    int moved[kMaxExtra];
    const std::size_t extra = spec.extra_fds.size() < kMaxExtra ? spec.extra_fds.size() : kMaxExtra;
    for (std::size_t i = 0; i < extra; ++i) moved[i] = ::fcntl(spec.extra_fds[i].second, F_DUPFD_CLOEXEC, kHigh);
    const int output = ::fcntl(output_fd, F_DUPFD_CLOEXEC, kHigh);
    ::dup2(output, STDOUT_FILENO);
    ::dup2(output, STDERR_FILENO);
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    for (std::size_t i = 0; i < extra; ++i) ::dup2(moved[i], spec.extra_fds[i].first);
    rlimit core{0, 0};
    ::setrlimit(RLIMIT_CORE, &core);
    // The kernel's CPU limit is per process and only a safety net under the judge's, which sums
    // the whole tree: it stops a runaway process even while the judge cannot get the CPU.
    if (spec.limits.cpu_seconds > 0) {
        const auto seconds = static_cast<rlim_t>(spec.limits.cpu_seconds * 1.5 + 5);
        rlimit cpu{seconds, seconds + 5};
        ::setrlimit(RLIMIT_CPU, &cpu);
    }
    if (spec.limits.open_files > 0) {
        rlimit open_files{spec.limits.open_files, spec.limits.open_files};
        ::setrlimit(RLIMIT_NOFILE, &open_files);
    }
    if (spec.limits.file_size_bytes > 0) {
        rlimit file_size{spec.limits.file_size_bytes, spec.limits.file_size_bytes};
        ::setrlimit(RLIMIT_FSIZE, &file_size);
    }
    // Output beyond the file-size limit must end the write, not the process with SIGXFSZ.
    ::signal(SIGXFSZ, SIG_IGN);
    ::signal(SIGPIPE, SIG_DFL);
    if (!spec.working_dir.empty() && ::chdir(spec.working_dir.c_str()) != 0) {
        int error = errno;
        [[maybe_unused]] auto ignored = ::write(error_report_fd, &error, sizeof error);
        ::_exit(127);
    }
    ::execvpe(argv[0], argv, envp);
    int error = errno;
    [[maybe_unused]] auto ignored = ::write(error_report_fd, &error, sizeof error);
    ::_exit(127);
}

}  // namespace

ProcessOutcome run_process(const ProcessSpec& spec) {
    ProcessOutcome outcome;
    if (spec.argv.empty()) {
        outcome.start_error = "no program to run";
        return outcome;
    }
    int output_pipe[2];
    int error_pipe[2];
    if (::pipe2(output_pipe, O_CLOEXEC) != 0) {
        outcome.start_error = std::string("pipe: ") + std::strerror(errno);
        return outcome;
    }
    if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
        outcome.start_error = std::string("pipe: ") + std::strerror(errno);
        ::close(output_pipe[0]);
        ::close(output_pipe[1]);
        return outcome;
    }
    std::vector<std::string> argv_copy = spec.argv;
    std::vector<std::string> env_copy = spec.environment;
    std::vector<char*> argv = pointers_to(argv_copy);
    std::vector<char*> envp = pointers_to(env_copy);

    std::unique_ptr<ProcessCountCgroup> cgroup =
        spec.limits.max_tasks > 0 ? ProcessCountCgroup::create(spec.limits.max_tasks) : nullptr;
    const char* cgroup_procs = cgroup ? cgroup->procs_file().c_str() : nullptr;
    auto kill_everything = [&](pid_t root) {
        kill_tree(root);
        if (cgroup) cgroup->kill_all();
    };

    const auto start = Clock::now();
    pid_t pid = ::fork();
    if (pid < 0) {
        outcome.start_error = std::string("fork: ") + std::strerror(errno);
        for (int fd : {output_pipe[0], output_pipe[1], error_pipe[0], error_pipe[1]}) ::close(fd);
        return outcome;
    }
    if (pid == 0) exec_child(spec, output_pipe[1], error_pipe[1], argv.data(), envp.data(), cgroup_procs);

    ::setpgid(pid, pid);   // also done in the child; whichever runs first wins the race harmlessly
    ::close(output_pipe[1]);
    ::close(error_pipe[1]);

    int exec_error = 0;
    if (::read(error_pipe[0], &exec_error, sizeof exec_error) == sizeof exec_error) {
        ::close(error_pipe[0]);
        ::close(output_pipe[0]);
        ::waitpid(pid, nullptr, 0);
        outcome.start_error = "cannot run " + spec.argv[0] + ": " + std::strerror(exec_error);
        return outcome;
    }
    ::close(error_pipe[0]);
    outcome.started = true;

    OutputKeeper keeper;
    keeper.keep = spec.limits.kept_output_bytes;
    bool output_open = true;
    bool reaped = false;
    int status = 0;
    rusage usage{};
    bool killed = false;
    auto last_sample = start;
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(wall_backstop_seconds(spec.limits)));
    char buffer[65536];

    while (!reaped || output_open) {
        if (output_open) {
            pollfd waiting{output_pipe[0], POLLIN, 0};
            int ready = ::poll(&waiting, 1, kPollMilliseconds);
            if (ready > 0) {
                ssize_t got = ::read(output_pipe[0], buffer, sizeof buffer);
                if (got > 0) {
                    keeper.add(buffer, static_cast<std::size_t>(got));
                } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                    output_open = false;
                }
            }
        } else if (!reaped) {
            ::usleep(kPollMilliseconds * 1000);
        }
        if (!reaped) {
            pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
            if (done == pid) {
                reaped = true;
                // A descendant that outlived the child may still hold the output open.
                kill_everything(pid);
            }
        }
        const auto now = Clock::now();
        if (!reaped && !killed) {
            if (now >= deadline) {
                outcome.stopped_by = LimitHit::WallClock;
            } else if (spec.limits.output_bytes > 0 && keeper.total > spec.limits.output_bytes) {
                outcome.stopped_by = LimitHit::Output;
            } else if (now - last_sample >= std::chrono::milliseconds(kSampleMilliseconds)) {
                // A judge that did not get the CPU for a while cannot tell what the tree did
                // meanwhile; it counts at most two periods as blocked rather than blame the program.
                const double interval = std::min(std::chrono::duration<double>(now - last_sample).count(),
                                                 2 * kSampleMilliseconds / 1000.0);
                last_sample = now;
                const TreeSample sample = sample_tree(pid);
                outcome.peak_memory_bytes = std::max(outcome.peak_memory_bytes, sample.resident_bytes);
                outcome.peak_processes = std::max(outcome.peak_processes, sample.processes);
                outcome.cpu_seconds = std::max(outcome.cpu_seconds, sample.cpu_seconds);
                if (!sample.progressing) outcome.blocked_seconds += interval;
                // Processes first: a fork bomb's copies also add up to too much memory and CPU time,
                // but its cause is the number of processes, and that is what the student must read.
                if ((spec.limits.max_processes > 0 && sample.processes > spec.limits.max_processes) ||
                    (cgroup && cgroup->limit_reached())) {
                    outcome.stopped_by = LimitHit::Processes;
                } else if (spec.limits.memory_bytes > 0 && sample.resident_bytes > spec.limits.memory_bytes) {
                    outcome.stopped_by = LimitHit::Memory;
                } else if (spec.limits.cpu_seconds > 0 && outcome.cpu_seconds > spec.limits.cpu_seconds) {
                    outcome.stopped_by = LimitHit::CpuTime;
                } else if (spec.limits.blocked_seconds > 0 && outcome.blocked_seconds > spec.limits.blocked_seconds) {
                    outcome.stopped_by = LimitHit::Blocked;
                }
            }
            if (outcome.stopped_by != LimitHit::None) {
                kill_everything(pid);
                killed = true;
            }
        }
        // Once the child is gone, read what it left in the pipe and stop: a descendant that
        // escaped the kill must not keep the judge waiting.
        if (reaped && output_open) {
            pollfd waiting{output_pipe[0], POLLIN, 0};
            if (::poll(&waiting, 1, 0) == 0) output_open = false;
        }
    }
    ::close(output_pipe[0]);

    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const double reaped_cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                              static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    outcome.cpu_seconds = std::max(outcome.cpu_seconds, reaped_cpu);
    outcome.output = keeper.text();
    outcome.output_bytes = keeper.total;
    if (WIFEXITED(status) && !killed) {
        outcome.exited = true;
        outcome.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        outcome.signal = WTERMSIG(status);
        // The kernel's own CPU limit, set a little above the judge's, ended a process first.
        if (outcome.signal == SIGXCPU && outcome.stopped_by == LimitHit::None) outcome.stopped_by = LimitHit::CpuTime;
    }
    return outcome;
}

const char* to_string(LimitHit limit) {
    switch (limit) {
        case LimitHit::None: return "no limit";
        case LimitHit::CpuTime: return "CPU time";
        case LimitHit::Blocked: return "blocked time";
        case LimitHit::WallClock: return "wall-clock backstop";
        case LimitHit::Memory: return "memory";
        case LimitHit::Output: return "output";
        case LimitHit::Processes: return "process count";
    }
    return "?";
}

double wall_backstop_seconds(const ProcessLimits& limits) {
    if (limits.wall_seconds > 0) return limits.wall_seconds;
    return std::max(60.0, 10 * limits.cpu_seconds);
}

std::string describe_signal(int signal) {
    switch (signal) {
        case SIGSEGV: return "segmentation fault (SIGSEGV): a bad pointer was dereferenced, or the stack overflowed (a recursion without end)";
        case SIGBUS: return "bus error (SIGBUS): memory that cannot be accessed";
        case SIGABRT: return "abort (SIGABRT): abort(), a failed assert() or an uncaught exception";
        case SIGFPE: return "arithmetic error (SIGFPE), for instance an integer division by zero";
        case SIGILL: return "illegal instruction (SIGILL)";
        case SIGKILL: return "killed (SIGKILL)";
        case SIGTERM: return "terminated (SIGTERM)";
        default: {
            const char* name = ::strsignal(signal);
            return std::string("signal ") + std::to_string(signal) + (name ? std::string(" (") + name + ")" : "");
        }
    }
}

std::string last_lines(const std::string& text, std::size_t count) {
    std::size_t position = text.size();
    while (position > 0 && (text[position - 1] == '\n')) --position;
    std::size_t lines = 0;
    std::size_t start = position;
    while (start > 0) {
        if (text[start - 1] == '\n' && ++lines == count) break;
        --start;
    }
    return text.substr(start, position - start);
}

std::string judge_path_variable() {
    const char* path = std::getenv("PATH");
    return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

}  // namespace mgpu::judge
