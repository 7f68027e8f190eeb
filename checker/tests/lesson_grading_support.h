// Shared by every lesson's grading tests, built once per lesson: the lesson under test comes from
// the executable's compile definitions (MGPU_TEST_LESSON, MGPU_TEST_LESSON_ID, MGPU_TEST_STUDENT_FILE).
// A grade request against this build's checker of that lesson,
// submissions made from the reference solution by text edits, and sharding of long test lists
// across several meson tests (MGPU_CHECKER_SHARD="i/n").
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "grading.h"

namespace lesson_tests {

// Grades with the limits of real grading.
mgpu::judge::GradeRequest request_for(const std::string& submission_dir);

// The CPU-time limit per case for submissions that loop forever on purpose: a fifth of real
// grading's, so that each endless case costs seconds, not twenty. The reference test holds every
// correct case to half of it.
double endless_loop_cpu_seconds();

std::string read_text(const std::string& path);
std::string solution_source();    // solutions/<lesson id>/<student file>

// A submission folder holding <lesson id>/<student file> with `source`; returns the folder.
std::string write_submission(const std::string& name, const std::string& source);

// Applies {"find", "replace"} edits in order; throws std::runtime_error naming an edit whose
// text is not in the source (the reference solution changed under it).
std::string apply_edits(std::string source, const nlohmann::json& edits);

// Whether item `index` belongs to this process's shard.
bool in_this_shard(std::size_t index);

const mgpu::judge::CriterionResult& criterion(const mgpu::judge::LessonResult& lesson, const std::string& name);

// The whole terminal report, for test failure messages.
std::string report_text(const mgpu::judge::GradeReport& report);

}  // namespace lesson_tests
