#include "gradebook.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>

namespace mgpu::cli {

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + "\"";
}

std::string csv_points(double points) {
    // Rounded to hundredths as integers first, so that no locale or printf rounding mode differs.
    const long long hundredths = std::llround(points * 100.0);
    char text[32];
    std::snprintf(text, sizeof text, "%s%lld.%02lld", hundredths < 0 ? "-" : "", std::llabs(hundredths) / 100,
                  std::llabs(hundredths) % 100);
    return text;
}

nlohmann::json row_to_json(const GradeRow& row) {
    nlohmann::json criteria = nlohmann::json::array();
    for (const auto& [name, points] : row.criteria) criteria.push_back({name, points});
    return {{"student", row.student}, {"lesson", row.lesson},   {"score", row.score},
            {"max_score", row.max_score}, {"status", row.status}, {"criteria", criteria}};
}

std::optional<GradeRow> row_from_json(const nlohmann::json& json) {
    try {
        GradeRow row;
        row.student = json.at("student").get<std::string>();
        row.lesson = json.at("lesson").get<int>();
        row.score = json.at("score").get<double>();
        row.max_score = json.at("max_score").get<double>();
        row.status = json.at("status").get<std::string>();
        for (const auto& pair : json.at("criteria")) row.criteria.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<double>());
        return row;
    } catch (const std::exception&) {
        return std::nullopt;   // an entry written by another version: graded again
    }
}

std::string gradebook_csv(std::vector<GradeRow> rows, const std::vector<LessonColumns>& lessons) {
    std::sort(rows.begin(), rows.end(), [](const GradeRow& a, const GradeRow& b) {
        return a.student != b.student ? a.student < b.student : a.lesson < b.lesson;
    });
    const bool several = lessons.size() > 1;
    std::string text = "student,lesson,score,max_score,status";
    for (const auto& lesson : lessons) {
        for (const auto& name : lesson.criteria)
            text += "," + csv_field(several ? "L" + std::to_string(lesson.lesson) + " " + name : name);
    }
    text += "\n";
    for (const auto& row : rows) {
        text += csv_field(row.student) + "," + std::to_string(row.lesson) + "," + csv_points(row.score) + "," +
                csv_points(row.max_score) + "," + row.status;
        for (const auto& lesson : lessons) {
            for (const auto& name : lesson.criteria) {
                text += ",";
                if (lesson.lesson != row.lesson || row.kit_error()) continue;
                for (const auto& [criterion, points] : row.criteria)
                    if (criterion == name) text += csv_points(points);
            }
        }
        text += "\n";
    }
    return text;
}

}  // namespace mgpu::cli
