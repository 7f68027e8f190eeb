// Compares the results of one conformance program on the simulator with its real-runtime twin.
// The real side may have been run several times (all GPUs, then fewer through
// CUDA_VISIBLE_DEVICES, so that each preset finds a machine of its size); its runs are merged:
// a case failed if it failed in any run, passed if it passed in one, skipped if skipped in all.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "doctest_results.h"

namespace mgpu::validate {

// One run of one program: its results, and what went wrong with the run itself, if anything.
struct SideRun {
    std::string label;          // e.g. "CUDA_VISIBLE_DEVICES=0"; names the run in merged messages
    ProgramResults results;
    std::string problem;        // could not start, ended by a signal, report cut short...; "" when fine
};

struct MergedCase {
    std::string name;
    Outcome outcome = Outcome::NotRun;
    std::vector<std::string> failures;
    std::vector<std::string> skip_reasons;
    std::vector<std::string> partial_skips;
};

std::vector<MergedCase> merge_runs(const std::vector<SideRun>& runs);

struct CaseComparison {
    std::string program;
    std::string case_name;
    Outcome simulator = Outcome::NotRun;
    Outcome real = Outcome::NotRun;
    std::vector<std::string> details;   // what failed, or why it did not run, side named first
};

struct Comparison {
    std::vector<CaseComparison> differing;
    std::vector<CaseComparison> skipped;         // not compared: the real side alone skipped them (details = reasons)
    std::vector<CaseComparison> partly_skipped;  // compared, but some presets were skipped on the real side
    std::vector<std::string> program_problems;   // runs that did not end normally
    int compared = 0;
    int real_cases_run = 0;                      // cases that passed or failed on the real side
};

void compare_program(const std::string& program, const std::vector<SideRun>& simulator_runs,
                     const std::vector<SideRun>& real_runs, Comparison& into);

}  // namespace mgpu::validate
