// The gradebook of a class: one row per student and lesson, written as grades.csv. The text
// depends only on the rows (sorted, fixed number format, no timestamps), so grading the same
// files with the same seed writes the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mgpu::cli {

// The criteria of one lesson, in the rubric's order: the gradebook's columns for it.
struct LessonColumns {
    int lesson = 0;
    std::vector<std::string> criteria;
};

struct GradeRow {
    std::string student;
    int lesson = 0;
    double score = 0, max_score = 0;
    std::string status;   // "graded", "not built" or "kit error"
    std::vector<std::pair<std::string, double>> criteria;   // criterion name, points earned

    bool kit_error() const { return status == "kit error"; }
};

nlohmann::json row_to_json(const GradeRow& row);
std::optional<GradeRow> row_from_json(const nlohmann::json& json);

// Header and rows, sorted by student then lesson. With one lesson the criterion columns carry the
// criterion's name; with several, "L<N> name", blank in the rows of other lessons.
std::string gradebook_csv(std::vector<GradeRow> rows, const std::vector<LessonColumns>& lessons);

// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& text);

// Points with two decimals, the same on every machine and locale.
std::string csv_points(double points);

}  // namespace mgpu::cli
