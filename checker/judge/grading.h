// The judge's results: per lesson, per criterion, per test case. Reporters read only these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grade.h"
#include "lesson_catalog.h"

namespace mgpu::judge {

enum class CaseStatus {
    Passed,
    Failed,          // the checks ran and some did not hold
    Skipped,         // not run here (too few GPUs, another machine asked for): neither passed nor failed
    Crashed,         // the process ended before a trusted verdict (signal, exit, abort)
    TimedOut,
    MemoryExceeded,
    OutputExceeded,
    Unfinished,      // the machine was too busy for the case to finish, even run again alone: no verdict,
                     // and the grade as a whole is the kit's failure (exit code 4), not the student's
};

const char* to_string(CaseStatus status);
bool counts_as_failed(CaseStatus status);   // everything but Passed, Skipped and Unfinished

struct CheckFinding {
    std::string check, expected, observed;
    std::string file;     // the student's offending call, when known
    int line = 0;
    std::string scenario;
    bool symptom = false;     // a wrong result that names no cause: shown after findings that do
    std::string section;      // the lesson section that teaches the fix, when not the criterion's
};

struct CaseResult {
    std::string name;                 // full test case name, "peer checks: ..."
    std::string criterion;
    CaseStatus status = CaseStatus::Failed;
    std::string reason;               // one sentence for anything but Passed
    std::vector<CheckFinding> findings;
    std::string scenario;
    std::string output_tail;          // what the program printed, for crashes and timeouts
    std::string timeline_file;        // the page drawing what a failed overlap or ordering case ran
    double seconds = 0;               // wall clock
    double cpu_seconds = 0;           // CPU time of the case's processes: what the limits count
    double points = 0, max_points = 0;
};

struct CriterionResult {
    Criterion criterion;
    double earned = 0;
    double max = 0;                   // criterion points less the share of skipped cases
    int passed = 0, failed = 0, skipped = 0, unfinished = 0;
};

enum class LessonOutcome {
    Graded,        // the checker ran; points as earned
    NotBuilt,      // the submission could not be built (missing file, compile error, forbidden symbol): 0 points
    KitFault,      // the kit itself failed (exit code 4)
};

struct LessonResult {
    int number = 0;
    std::string id, title;
    std::vector<std::string> submission_files;   // as the student knows them
    LessonOutcome outcome = LessonOutcome::Graded;
    std::string problem_kind;                    // "missing file", "compile error", ... when not graded
    std::string problem;                         // the full explanation (compiler output included)
    std::string lesson_text;                     // rubric's lesson text path
    std::vector<CriterionResult> criteria;
    std::vector<CaseResult> cases;
    double score = 0, max_score = 0;
    double seconds = 0;
    bool build_cached = false;
};

struct GradeReport {
    std::vector<LessonResult> lessons;
    std::string backend;
    std::string sandbox;
    std::uint64_t seed = 0;
    double seconds = 0;
    std::string kit_fault;        // a fault before any lesson could be looked at

    double score() const;
    double max_score() const;
    int cases_passed() const;
    int cases_failed() const;
    int cases_skipped() const;
    int cases_unfinished() const;
    int exit_code() const;        // 0 all passed, 1 some failed, 3 not built, 4 kit fault or a case unfinished
};

// Grades without printing anything. Never throws: faults become results.
GradeReport grade_submission(const GradeRequest& request);

// Fills criteria, points and score from the cases (also used for NotBuilt lessons: all zero).
void score_lesson(const Rubric& rubric, LessonResult* lesson);

}  // namespace mgpu::judge
