#include "case_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process_runner.h"
#include "record_seal.h"

namespace mgpu::judge {

namespace {

using nlohmann::json;

constexpr std::size_t kTailLines = 40;
constexpr std::size_t kCaseProcessLimit = 64;

std::string escape_filter(const std::string& name) {
    std::string escaped;
    for (char c : name) {
        if (c == ',' || c == '\\') escaped += '\\';
        escaped += c;
    }
    return escaped;
}

std::string human_bytes(std::size_t bytes) {
    char text[32];
    if (bytes >= (std::size_t{1} << 30)) {
        std::snprintf(text, sizeof text, "%.0f GiB", static_cast<double>(bytes) / (1u << 30));
    } else {
        std::snprintf(text, sizeof text, "%.0f MiB", static_cast<double>(bytes) / (1u << 20));
    }
    return text;
}

std::string seconds_text(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, seconds < 10 ? "%.1f s" : "%.0f s", seconds);
    return text;
}

struct RawRun {
    ProcessOutcome outcome;
    CaseRecords records;
    std::string key;
};

constexpr std::size_t kRecordBytesKept = std::size_t{64} << 20;

// Reads the result pipe while the case runs (a full pipe would stall the checker), keeping the
// first kRecordBytesKept bytes. Stops once `finished` is set and nothing is left to read: every
// process of the case has ended by then, but one of them may have passed the write end on to a
// process the sandbox has not yet reaped, so end-of-file is not waited for.
class RecordCollector {
public:
    explicit RecordCollector(int read_fd) : fd_(read_fd), thread_([this] { collect(); }) {}
    std::string finish() {
        finished_ = true;
        thread_.join();
        return std::move(text_);
    }

private:
    void collect() {
        char buffer[65536];
        for (;;) {
            const bool last_pass = finished_.load();
            pollfd ready{fd_, POLLIN, 0};
            if (::poll(&ready, 1, last_pass ? 0 : 50) < 0 && errno != EINTR) return;
            bool drained = false;
            for (;;) {
                ssize_t got = ::read(fd_, buffer, sizeof buffer);
                if (got > 0) {
                    if (text_.size() < kRecordBytesKept) text_.append(buffer, static_cast<std::size_t>(got));
                    continue;
                }
                if (got < 0 && errno == EINTR) continue;
                drained = true;   // EAGAIN: nothing more for now; 0: every write end is closed
                if (got == 0) return;
                break;
            }
            if (last_pass && drained) return;
        }
    }

    int fd_;
    std::string text_;
    std::atomic<bool> finished_{false};
    std::thread thread_;
};

// One run of the binary with a fresh key and result pipe.
RawRun run_binary(const std::string& binary, const std::vector<std::string>& doctest_args,
                  const CaseRunSettings& settings) {
    RawRun run;
    run.key = seal::new_key();
    // The records travel through a pipe: the checker holds only its write end, so nothing in
    // the case can read back what was sent, or rewrite it.
    int result_pipe[2];
    if (::pipe2(result_pipe, O_CLOEXEC) != 0) {
        run.outcome.start_error = std::string("pipe: ") + std::strerror(errno);
        return run;
    }
    ::fcntl(result_pipe[0], F_SETFL, O_NONBLOCK);
    int key_pipe[2];
    if (::pipe2(key_pipe, O_CLOEXEC) != 0) {
        ::close(result_pipe[0]);
        ::close(result_pipe[1]);
        run.outcome.start_error = std::string("pipe: ") + std::strerror(errno);
        return run;
    }
    const std::string key_line = run.key + "\n";
    [[maybe_unused]] auto written = ::write(key_pipe[1], key_line.data(), key_line.size());
    ::close(key_pipe[1]);

    ProcessSpec spec;
    SandboxView view;
    view.readable_paths = {binary};
    view.hidden_dirs = settings.hidden_dirs;
    view.hidden_again = settings.hidden_again;
    view.device_files = settings.device_files;
    view.toolchain_dirs = settings.toolchain_dirs;
    spec.argv = settings.sandbox ? settings.sandbox->prefix(view) : std::vector<std::string>{};
    spec.argv.push_back(binary);
    spec.argv.push_back("--mgpu-result-fd=3");
    spec.argv.push_back("--mgpu-key-fd=4");
    spec.argv.push_back("--mgpu-seed=" + std::to_string(settings.seed));
    if (!settings.topology.empty()) spec.argv.push_back("--mgpu-topology=" + settings.topology);
    spec.argv.insert(spec.argv.end(), doctest_args.begin(), doctest_args.end());
    // A clean environment: nothing of the caller's (CUDA_VISIBLE_DEVICES, MGPU_TOPOLOGY, ...) leaks in.
    // On real GPUs every module loads when the case starts: with CUDA's default lazy loading a kernel's
    // first launch loads its module, which may synchronise the context (CUDA Programming Guide, "Lazy
    // Loading"), and a correct pipeline would then look serialised. NCCL runs with NVLink multicast
    // (NVLS) off, which the machines the kit is validated on require. The simulator ignores both.
    // In the race build (docs/host-races.md) the harness takes ThreadSanitizer's reports itself: the
    // runtime's exit status and its thread-leak reports are left out of the verdict. The cases' inputs
    // and results are vectors of many megabytes, filled once: glibc's malloc asks for transparent
    // huge pages for them (glibc 2.35 and later; older ones ignore the setting), which halves the
    // kernel's share of a case's CPU time (page faults and zeroing) without changing what runs.
    spec.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
                        "CUDA_MODULE_LOADING=EAGER", "NCCL_NVLS_ENABLE=0",
                        "TSAN_OPTIONS=exitcode=0:report_thread_leaks=0:report_signal_unsafe=0",
                        "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"};
    spec.extra_fds = {{3, result_pipe[1]}, {4, key_pipe[0]}};
    spec.limits.cpu_seconds = settings.cpu_seconds;
    spec.limits.blocked_seconds = settings.blocked_seconds;
    spec.limits.wall_seconds = settings.wall_seconds;
    spec.limits.memory_bytes = settings.memory_limit_bytes;
    spec.limits.output_bytes = settings.output_limit_bytes;
    spec.limits.kept_output_bytes = std::size_t{16} << 10;
    spec.limits.max_processes = kCaseProcessLimit;
    RecordCollector collector(result_pipe[0]);
    run.outcome = run_process(spec);
    ::close(result_pipe[1]);
    ::close(key_pipe[0]);
    const std::string records = collector.finish();
    ::close(result_pipe[0]);
    run.records = read_records(records, run.key);
    if (settings.sandbox && settings.sandbox->reports_signals_as_exit_codes() && run.outcome.exited &&
        run.outcome.exit_code > 128 && run.outcome.exit_code < 160) {
        run.outcome.exited = false;
        run.outcome.signal = run.outcome.exit_code - 128;
        if (run.outcome.signal == SIGXCPU && run.outcome.stopped_by == LimitHit::None) {
            run.outcome.stopped_by = LimitHit::CpuTime;
        }
    }
    return run;
}

// Why a run has no trusted verdict, in one sentence.
std::string explain_missing_verdict(const RawRun& run) {
    const ProcessOutcome& outcome = run.outcome;
    if (!outcome.started) return "the checker could not be started: " + outcome.start_error;
    if (!outcome.exited) return "crashed: " + describe_signal(outcome.signal);
    if (run.records.broken) {
        return "no verdict: the checker's records arrived incomplete or out of order, so none of them is believed (is "
               "something in the code under test writing to, reading from or closing descriptors it did not open?)";
    }
    if (!run.records.started) {
        return "no verdict: the program ended (exit status " + std::to_string(outcome.exit_code) +
               ") before the check started, so nothing it printed can be trusted";
    }
    if (!run.records.ended) {
        return "no verdict: the program ended (exit status " + std::to_string(outcome.exit_code) +
               ") in the middle of the check, for instance by calling exit() from the code under test";
    }
    return "no verdict: the program did not finish normally after the check (exit status " +
           std::to_string(outcome.exit_code) + ")";
}

// A failed case's timeline page, named after the case ("async-overlap-copies-and-kernels-overlap-
// in-time.html"); "" when it cannot be written (the report then simply names no file).
std::string write_timeline(const std::string& folder, const std::string& case_name, const std::string& html) {
    std::string slug;
    for (char c : case_name) {
        const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
        if (keep) slug += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        else if (!slug.empty() && slug.back() != '-') slug += '-';
        if (slug.size() >= 90) break;
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    if (slug.empty()) slug = "case";
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    const std::filesystem::path file = std::filesystem::path(folder) / (slug + ".html");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << html;
    return out ? file.string() : "";
}

CaseResult judge_case(const std::string& name, const RawRun& run, const CaseRunSettings& settings) {
    CaseResult result;
    result.name = name;
    result.seconds = run.outcome.seconds;
    result.cpu_seconds = run.outcome.cpu_seconds;
    result.findings = run.records.findings;
    result.scenario = run.records.scenario;
    const ProcessOutcome& outcome = run.outcome;
    const CaseRecords& records = run.records;

    if (outcome.stopped_by == LimitHit::CpuTime) {
        result.status = CaseStatus::TimedOut;
        result.reason = "stopped after " + seconds_text(settings.cpu_seconds) +
                        " of CPU time, the limit for one check (an endless loop, or far too much work)";
    } else if (outcome.stopped_by == LimitHit::Blocked) {
        result.status = CaseStatus::TimedOut;
        result.reason = "stopped after " + seconds_text(settings.blocked_seconds) +
                        " in which no thread of the program ran: it waits for something that never happens "
                        "(a deadlock, a lock never released, a sleep)";
    } else if (outcome.stopped_by == LimitHit::WallClock) {
        result.status = CaseStatus::Unfinished;
        result.reason = "not finished: the machine was too busy. After " + seconds_text(outcome.seconds) +
                        " of wall-clock time the check had used only " + seconds_text(outcome.cpu_seconds) +
                        " of CPU time, so this is no fault of the code under test; grade again when the machine "
                        "is less busy, or with fewer --jobs";
    } else if (outcome.memory_exceeded()) {
        result.status = CaseStatus::MemoryExceeded;
        result.reason = "stopped: used more than " + human_bytes(settings.memory_limit_bytes) +
                        " of host memory (the limit for one check)";
    } else if (outcome.too_many_processes()) {
        result.status = CaseStatus::Crashed;
        result.reason = "stopped: too many processes (more than " + std::to_string(kCaseProcessLimit) +
                        " at once, the limit for one check). The exercise needs no fork() and no other "
                        "programs: remove them";
    } else if (outcome.output_exceeded()) {
        result.status = CaseStatus::OutputExceeded;
        result.reason = "stopped: printed more than " + human_bytes(settings.output_limit_bytes) +
                        " of output (the limit for one check)";
    } else if (outcome.started && outcome.exited && !records.broken && records.started && records.ended &&
               records.exit_record && records.started_name == name &&
               outcome.exit_code == (records.exit_status == 0 ? 0 : 1)) {
        if (records.skipped) {
            result.status = CaseStatus::Skipped;
            result.reason = records.skip_reason.empty() ? "skipped" : records.skip_reason;
        } else if (records.passed) {
            result.status = CaseStatus::Passed;
        } else {
            result.status = CaseStatus::Failed;
            for (const auto& text : records.exceptions) {
                result.findings.push_back(CheckFinding{"the code under test did not throw",
                                                       "no exception", "exception: " + text, "", 0, result.scenario});
            }
            if (result.findings.empty()) result.reason = "the check failed without saying why";
        }
    } else if (records.started && records.started_name != name && !records.started_name.empty()) {
        result.status = CaseStatus::Crashed;
        result.reason = "internal: asked for \"" + name + "\" but \"" + records.started_name + "\" ran";
    } else {
        result.status = CaseStatus::Crashed;
        result.reason = explain_missing_verdict(run);
    }
    // What names a cause comes first; wrong values that do not say why come after it.
    std::stable_sort(result.findings.begin(), result.findings.end(),
                     [](const CheckFinding& a, const CheckFinding& b) { return !a.symptom && b.symptom; });
    if (result.status != CaseStatus::Passed && result.status != CaseStatus::Skipped) {
        result.output_tail = last_lines(outcome.output, kTailLines);
    }
    if (result.status != CaseStatus::Passed && result.status != CaseStatus::Skipped &&
        result.status != CaseStatus::Failed && !records.last_step.empty()) {
        result.reason += ", during " + records.last_step;
    }
    if (result.status == CaseStatus::Failed && !records.timeline_html.empty() && !settings.timeline_dir.empty())
        result.timeline_file = write_timeline(settings.timeline_dir, name, records.timeline_html);
    return result;
}

}  // namespace

std::string new_nonce() {
    unsigned char bytes[16] = {};
    int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    bool filled = fd >= 0 && ::read(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
    if (fd >= 0) ::close(fd);
    if (!filled) {
        // No /dev/urandom: mix the clock and addresses; still unknown to the child in advance.
        auto mix = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                   reinterpret_cast<std::uintptr_t>(&fd);
        for (auto& byte : bytes) {
            mix = mix * 6364136223846793005ULL + 1442695040888963407ULL;
            byte = static_cast<unsigned char>(mix >> 56);
        }
    }
    std::string hex;
    char digits[3];
    for (unsigned char byte : bytes) {
        std::snprintf(digits, sizeof digits, "%02x", byte);
        hex += digits;
    }
    return hex;
}

CaseRecords read_records(const std::string& text, const std::string& key) {
    CaseRecords records;
    std::istringstream lines(text);
    std::string line;
    std::uint64_t next_seq = 0;
    while (std::getline(lines, line)) {
        const std::optional<std::string> opened = seal::open_sealed_line(key, line);
        if (!opened) continue;   // not the checker's: the student's code may write anything here
        json record = json::parse(*opened, nullptr, false);
        if (record.is_discarded() || !record.is_object()) continue;
        // Sealed records come in the order they were written, each once, and the exit record
        // is the last: anything else means some were lost or replayed.
        const auto seq = record.value("seq", std::uint64_t{0});
        if (!record.contains("seq") || seq != next_seq || records.exit_record) {
            records.broken = true;
            break;
        }
        ++next_seq;
        const std::string event = record.value("event", "");
        if (event == "case") {
            records.listed.push_back(record.value("name", ""));
            if (record.value("race", false)) records.race_cases.push_back(records.listed.back());
        } else if (event == "list-end") {
            records.list_complete = record.value("count", -1) == static_cast<int>(records.listed.size());
        } else if (event == "case-start") {
            records.started = true;
            records.started_name = record.value("name", "");
        } else if (event == "case-end") {
            records.ended = true;
            records.passed = record.value("passed", false);
            records.skipped = record.value("skipped", false);
            records.skip_reason = record.value("skip_reason", "");
            records.scenario = record.value("scenario", "");
        } else if (event == "finding") {
            CheckFinding finding;
            finding.check = record.value("check", "");
            finding.expected = record.value("expected", "");
            finding.observed = record.value("observed", "");
            finding.file = record.value("file", "");
            finding.line = record.value("line", 0);
            finding.scenario = record.value("scenario", "");
            finding.symptom = record.value("symptom", false);
            finding.section = record.value("section", "");
            records.findings.push_back(finding);
        } else if (event == "timeline") {
            records.timeline_html = record.value("html", "");
        } else if (event == "scenario") {
            records.scenario = record.value("text", "");
        } else if (event == "step") {
            records.last_step = record.value("text", "");
        } else if (event == "exception") {
            records.exceptions.push_back(record.value("text", ""));
        } else if (event == "exit") {
            records.exit_record = true;
            records.exit_status = record.value("status", -1);
        }
    }
    return records;
}

CaseListing list_cases(const std::string& binary, const CaseRunSettings& settings) {
    CaseListing listing;
    CaseRunSettings list_settings = settings;
    list_settings.cpu_seconds = std::max(30.0, settings.cpu_seconds);
    RawRun run = run_binary(binary, {"--list-test-cases"}, list_settings);
    if (!run.outcome.started) {
        listing.problem = "the checker could not be started: " + run.outcome.start_error;
        return listing;
    }
    if (run.records.broken || !run.records.list_complete || !run.records.exit_record || !run.outcome.exited ||
        run.outcome.exit_code != 0) {
        std::string why = run.outcome.out_of_time() ? "it ran out of " + std::string(to_string(run.outcome.stopped_by))
                          : !run.outcome.exited ? "it " + describe_signal(run.outcome.signal)
                                                : "it ended with status " + std::to_string(run.outcome.exit_code) +
                                                      " without listing its checks";
        listing.problem = "The checker program stopped before any check could run (" + why +
                          "). Something in the submission runs when the program starts.\n" +
                          last_lines(run.outcome.output, kTailLines);
        return listing;
    }
    std::set<std::string> seen;
    for (const auto& name : run.records.listed) {
        if (name.empty() || !seen.insert(name).second) {
            listing.problem = "internal: the checker lists an empty or repeated test case name \"" + name + "\"";
            return listing;
        }
    }
    listing.ok = true;
    listing.names = run.records.listed;
    listing.race_cases = run.records.race_cases;
    return listing;
}

std::vector<CaseResult> run_cases(const std::string& binary, const std::vector<std::string>& names,
                                  const CaseRunSettings& settings) {
    std::vector<CaseResult> results(names.size());
    std::atomic<std::size_t> next{0};
    auto run_one = [&](std::size_t index) {
        try {
            // A race case runs in the ThreadSanitizer build where there is one; in the plain build it
            // finds no race detector and skips itself, saying why.
            const bool race_case = !settings.race_binary.empty() && settings.race_cases.count(names[index]) > 0;
            RawRun run = run_binary(race_case ? settings.race_binary : binary,
                                    {"--test-case=" + escape_filter(names[index]), "--case-sensitive"}, settings);
            results[index] = judge_case(names[index], run, settings);
        } catch (const std::exception& error) {
            // An exception must not escape a worker thread (that would end the judge); the
            // "internal:" reason makes the lesson a kit fault.
            results[index].name = names[index];
            results[index].status = CaseStatus::Crashed;
            results[index].reason = std::string("internal: the judge failed running this case: ") + error.what();
        }
    };
    auto worker = [&] {
        for (std::size_t index = next.fetch_add(1); index < names.size(); index = next.fetch_add(1)) run_one(index);
    };
    const int jobs = std::max(1, std::min<int>(settings.jobs, static_cast<int>(names.size())));
    std::vector<std::thread> threads;
    for (int i = 1; i < jobs; ++i) threads.emplace_back(worker);
    worker();
    for (auto& thread : threads) thread.join();

    // A case the wall-clock backstop ended did not get the CPU it was ready to use: it runs again,
    // alone now, so that the other cases of this grading no longer compete with it.
    for (int round = 0; round < settings.busy_reruns; ++round) {
        for (std::size_t index = 0; index < names.size(); ++index) {
            if (results[index].status == CaseStatus::Unfinished) run_one(index);
        }
    }
    return results;
}

}  // namespace mgpu::judge
