// Runs a checker binary: once to list its test cases, then once per test case, each in its own
// sandboxed process with its own key. A case's verdict is believed only from records sealed with
// that key (record_seal.h), complete and in order, ending with the harness's own exit record, from
// a process whose exit status agrees with it; anything else (a crash, an exit from the student's
// code, printed fake summaries, records lost or forged) leaves that one case without a verdict.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "grading.h"
#include "sandbox.h"

namespace mgpu::judge {

struct CaseRunSettings {
    const Sandbox* sandbox = nullptr;
    // Per test case (process_runner.h says why CPU time): CPU time summed over the case's
    // processes, time with every thread waiting, and the wall clock only as a backstop (0 = derived
    // from the CPU limit). A case the backstop ends was starved by a busy machine: it is run again,
    // alone, up to `busy_reruns` times, and never counted against the student.
    double cpu_seconds = 20.0;
    double blocked_seconds = 10.0;
    double wall_seconds = 0.0;
    int busy_reruns = 2;
    std::size_t memory_limit_bytes = std::size_t{4} << 30;
    std::size_t output_limit_bytes = std::size_t{8} << 20;
    std::uint64_t seed = 1;
    std::string topology;
    int jobs = 1;
    std::string scratch_dir;      // where result files are written (outside the sandbox)
    std::string timeline_dir;     // where the timeline pages of failed cases go ("" = nowhere)
    std::vector<std::string> device_files;   // GPU device files the cases need (the cuda backend)
    std::vector<std::string> toolchain_dirs; // the toolkit's folder outside /usr (its libraries)
    std::vector<std::string> hidden_dirs;    // folders the cases must not see (grading_view.h)
    std::vector<std::string> hidden_again;
    // The submission's ThreadSanitizer build and the cases that run in it (CaseListing::race_cases).
    std::string race_binary;
    std::set<std::string> race_cases;
};

struct CaseListing {
    bool ok = false;
    std::vector<std::string> names;
    std::vector<std::string> race_cases;   // those of the doctest suite "host races" (mgpu/check/host_races.h)
    std::string problem;          // why no trusted list came back
};

CaseListing list_cases(const std::string& binary, const CaseRunSettings& settings);

// Results in the order of `names`; criterion, points and score are left for scoring.
std::vector<CaseResult> run_cases(const std::string& binary, const std::vector<std::string>& names,
                                  const CaseRunSettings& settings);

// Reads the records of one run: only lines sealed with `key`. Exposed for the tests.
struct CaseRecords {
    bool started = false;
    bool ended = false;
    bool exit_record = false;
    int exit_status = -1;         // doctest's status in the exit record; the process exits 0 for 0, else 1
    bool broken = false;          // a sealed record missing, repeated or after the exit record
    bool passed = false;
    bool skipped = false;
    std::string skip_reason;
    std::string started_name;
    std::string scenario;
    std::string last_step;        // what the case was doing last (its last "step" record)
    std::vector<CheckFinding> findings;
    std::string timeline_html;    // the case's timeline page (a failed overlap or ordering check)
    std::vector<std::string> exceptions;
    std::vector<std::string> listed;
    std::vector<std::string> race_cases;
    bool list_complete = false;
};
CaseRecords read_records(const std::string& text, const std::string& key);

// 128 random bits as hex (the run's seed is drawn from one).
std::string new_nonce();

}  // namespace mgpu::judge
