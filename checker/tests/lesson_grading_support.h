// Shared by every lesson's grading tests, compiled once for all lessons: a test case written with
// LESSON_TEST_CASE is registered once per lesson of tested_lessons() and finds the lesson it is
// about with current_lesson().
// A grade request against this build's checker of that lesson,
// submissions made from the reference solution by text edits, and sharding of long test lists
// across several meson tests (MGPU_CHECKER_SHARD="i/n").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "grading.h"
#include "tested_lessons.h"

// A test case run once per tested lesson, named "lesson <number>: <title>" (so --test-case="lesson 3: *"
// picks lesson 3's copy); inside, current_lesson() is the lesson of the copy that runs.
#define LESSON_TEST_CASE(title) LESSON_TEST_CASE_IMPL(title, DOCTEST_ANONYMOUS(lesson_test_case_))
#define LESSON_TEST_CASE_IMPL(title, function)                                                        \
    static void function();                                                                         \
    [[maybe_unused]] static const int DOCTEST_CAT(function, _registered) =                          \
        ::lesson_tests::register_for_each_lesson(&function, __FILE__, __LINE__, title);             \
    static void function()

namespace lesson_tests {

// Registers `body` as one doctest test case per tested lesson (LESSON_TEST_CASE does this).
int register_for_each_lesson(void (*body)(), const char* file, unsigned line, const char* title);

// The lesson of the running LESSON_TEST_CASE copy, from its name.
const TestedLesson& current_lesson();
// A tested lesson by number; throws std::runtime_error when it is not in tested_lessons().
const TestedLesson& tested_lesson(int number);

// Grades with the limits of real grading.
mgpu::judge::GradeRequest request_for(const TestedLesson& lesson, const std::string& submission_dir);

// The CPU-time limit per case for submissions that loop forever on purpose: a fifth of real
// grading's, so that each endless case costs seconds, not twenty. Correct code is graded under
// grading's own limit, which the reference test holds every correct case to a quarter of.
double endless_loop_cpu_seconds();

std::string read_text(const std::string& path);
std::string solution_source(const TestedLesson& lesson);    // solutions/<lesson id>/<student file>

// A submission folder holding <lesson id>/<student file> with `source`; returns the folder.
std::string write_submission(const TestedLesson& lesson, const std::string& name, const std::string& source);

// Applies {"find", "replace"} edits in order; throws std::runtime_error naming an edit whose
// text is not in the source (the reference solution changed under it).
std::string apply_edits(std::string source, const nlohmann::json& edits);

// Whether item `index` belongs to this process's shard.
bool in_this_shard(std::size_t index);

const mgpu::judge::CriterionResult& criterion(const mgpu::judge::LessonResult& lesson, const std::string& name);

// The whole terminal report, for test failure messages.
std::string report_text(const mgpu::judge::GradeReport& report);

// The block of the terminal report's first failed case under "What to fix", from its "x" line to
// the next case or criterion: what the student reads first.
std::string first_failed_case(const std::string& report);

// Checks that the first failed case explains the mistake as `explained` says: {"says": [phrases
// that must all be in it], "section": "4.5" (its "read:" line, or its criterion's heading, names that
// section), "at_student_line":
// true (an "at:" line points into the student's own file)}. Any of the three may be left out.
void check_first_explanation(const mgpu::judge::GradeReport& report, const TestedLesson& lesson,
                             const nlohmann::json& explained);

// Every place in the report, every finding shown, that names a file of the kit's own checker or
// tools (checker/..., tools/..., however many ../ before it) rather than the student's file or
// the lesson text. The command tools/mgpu, which the student runs, is not a place, and neither is
// the student's own file wherever it lies (the tests keep theirs under the build's checker/tests/).
std::vector<std::string> kit_paths_named(const mgpu::judge::GradeReport& report, const TestedLesson& lesson);

// Fails the running test for every kit path (kit_paths_named) and every misspelt count
// (misspelt_counts) in the report: what any graded submission's report must never show.
void check_report_reads_well(const mgpu::judge::GradeReport& report, const TestedLesson& lesson);

// Counts in the report that do not read as English: "3 stream(s)", "1 entries", "1 of 1 checks"
// ("2^23 + 1 elements" is a sum, and reads well).
std::vector<std::string> misspelt_counts(const mgpu::judge::GradeReport& report);

}  // namespace lesson_tests
