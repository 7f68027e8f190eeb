// Shared by the lesson 1 grading tests: a grade request against this build's lesson 1 checker,
// submissions made from the reference solution by text edits, and sharding of long test lists
// across several meson tests (MGPU_CHECKER_SHARD="i/n").
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "grading.h"

namespace lesson01_tests {

mgpu::judge::GradeRequest request_for(const std::string& submission_dir);

std::string read_text(const std::string& path);
std::string solution_source();    // solutions/01-devices/devices.cu

// A submission folder holding 01-devices/devices.cu with `source`; returns the folder.
std::string write_submission(const std::string& name, const std::string& source);

// Applies {"find", "replace"} edits in order; throws std::runtime_error naming an edit whose
// text is not in the source (the reference solution changed under it).
std::string apply_edits(std::string source, const nlohmann::json& edits);

// Whether item `index` belongs to this process's shard.
bool in_this_shard(std::size_t index);

const mgpu::judge::CriterionResult& criterion(const mgpu::judge::LessonResult& lesson, const std::string& name);

// The whole terminal report, for test failure messages.
std::string report_text(const mgpu::judge::GradeReport& report);

}  // namespace lesson01_tests
