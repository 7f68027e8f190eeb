// `check` keeps each lesson's result in the progress file, from the results.json the judge writes, so
// that `list` and `watch` can say where the student stands without grading again.
#pragma once

#include <filesystem>

#include "kit.h"

namespace mgpu::cli {

// Reads a Gradescope results.json written by the judge and stores, per lesson graded, its score, its
// outcome and its first failed test case. A file that cannot be read records nothing.
void record_check_results(const Kit& kit, const std::filesystem::path& results_json);

}  // namespace mgpu::cli
