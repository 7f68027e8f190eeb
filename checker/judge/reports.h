// The judge's three ways of telling results: a table for the terminal, Gradescope's
// results.json and JUnit XML (CodeGrade, CI). All say the same thing, including why a submission
// could not be built, and none counts a skipped case as passed or failed.
#pragma once

#include <string>

#include "grading.h"

namespace mgpu::judge {

// `all`: every failed case and finding, where the default shows the first few of each criterion.
std::string terminal_report(const GradeReport& report, bool color, bool quiet, bool all = false);
std::string gradescope_json(const GradeReport& report);
std::string junit_xml(const GradeReport& report);

// The closing line: "N passed, N failed" (and ", N skipped" when some were).
std::string totals_line(const GradeReport& report);

// Text from a student's program made safe to show: valid UTF-8, no terminal control sequences.
std::string printable(const std::string& text);

// "3.3" style points.
std::string format_points(double points);

}  // namespace mgpu::judge
