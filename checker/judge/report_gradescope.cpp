// Gradescope's results.json: score, max_score, execution_time, output, tests[] (name, score,
// max_score, status "passed"/"failed", output, tags). A skipped case has no status and no points:
// Gradescope shows it neutral.
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports.h"

namespace mgpu::judge {

namespace {

using nlohmann::json;

std::string case_output(const LessonResult& lesson, const CaseResult& test) {
    std::ostringstream out;
    if (!test.scenario.empty()) out << "Scenario: " << test.scenario << "\n";
    if (test.status == CaseStatus::Passed) return out.str() + "Passed.";
    if (!test.reason.empty()) out << to_string(test.status) << ": " << test.reason << "\n";
    for (const auto& finding : test.findings) {
        out << finding.check << "\n  expected: " << finding.expected << "\n  observed: " << finding.observed << "\n";
        if (!finding.file.empty()) out << "  at: " << finding.file << ":" << finding.line << "\n";
        if (!finding.section.empty() && !lesson.lesson_text.empty()) {
            out << "  read: " << lesson.lesson_text << " section " << finding.section << "\n";
        }
    }
    for (const auto& criterion : lesson.criteria) {
        if (criterion.criterion.name == test.criterion && !criterion.criterion.section.empty() &&
            !lesson.lesson_text.empty() && counts_as_failed(test.status)) {
            out << "Read " << lesson.lesson_text << " section " << criterion.criterion.section;
            if (!criterion.criterion.section_title.empty()) out << " (" << criterion.criterion.section_title << ")";
            out << ".\n";
        }
    }
    if (!test.output_tail.empty()) out << "Last output of the program:\n" << test.output_tail << "\n";
    return out.str();
}

double rounded(double points) { return static_cast<double>(static_cast<long long>(points * 10000 + 0.5)) / 10000; }

}  // namespace

std::string gradescope_json(const GradeReport& report) {
    json tests = json::array();
    std::ostringstream output;
    if (!report.kit_fault.empty()) output << "The checker could not run: " << report.kit_fault << "\n";
    for (const auto& lesson : report.lessons) {
        const std::string lesson_tag = "lesson " + std::to_string(lesson.number);
        output << "Lesson " << lesson.number << " (" << lesson.title << "): " << format_points(lesson.score) << " / "
               << format_points(lesson.max_score) << "\n";
        if (lesson.outcome != LessonOutcome::Graded) {
            const std::string heading = lesson.outcome == LessonOutcome::KitFault
                                            ? "The checker itself failed (" + lesson.problem_kind + ")"
                                            : "Could not be built (" + lesson.problem_kind + ")";
            output << heading << ":\n" << lesson.problem << "\n";
            std::string files;
            for (const auto& file : lesson.submission_files) files += (files.empty() ? "" : ", ") + file;
            tests.push_back(json{{"name", lesson_tag + " build: " + files},
                                 {"score", 0.0},
                                 {"max_score", rounded(lesson.max_score)},
                                 {"status", "failed"},
                                 {"output", heading + ":\n" + lesson.problem},
                                 {"tags", {lesson_tag, "build"}},
                                 {"visibility", "visible"}});
            continue;
        }
        for (const auto& test : lesson.cases) {
            json entry{{"name", test.name},
                       {"score", rounded(test.points)},
                       {"max_score", rounded(test.max_points)},
                       {"output", case_output(lesson, test)},
                       {"tags", {lesson_tag, test.criterion}},
                       {"visibility", "visible"}};
            if (test.status == CaseStatus::Skipped) {
                entry["name"] = test.name + " [skipped]";
                entry["tags"].push_back("skipped");
            } else if (test.status == CaseStatus::Unfinished) {
                entry["name"] = test.name + " [not finished]";
                entry["tags"].push_back("not finished");
            } else {
                entry["status"] = test.status == CaseStatus::Passed ? "passed" : "failed";
            }
            tests.push_back(entry);
        }
    }
    output << totals_line(report) << "\n";
    json lessons = json::array();
    for (const auto& lesson : report.lessons) {
        lessons.push_back(json{{"lesson", lesson.number},
                               {"id", lesson.id},
                               {"score", rounded(lesson.score)},
                               {"max_score", rounded(lesson.max_score)},
                               {"outcome", lesson.outcome == LessonOutcome::Graded     ? "graded"
                                           : lesson.outcome == LessonOutcome::NotBuilt ? "not built"
                                                                                       : "kit fault"},
                               {"problem_kind", lesson.problem_kind}});
    }
    json document{{"score", rounded(report.score())},
                  {"max_score", rounded(report.max_score())},
                  {"execution_time", static_cast<int>(report.seconds + 0.5)},
                  {"output", output.str()},
                  {"visibility", "visible"},
                  {"stdout_visibility", "visible"},
                  {"tests", tests},
                  {"extra_data", json{{"seed", report.seed},
                                      {"backend", report.backend},
                                      {"sandbox", report.sandbox},
                                      {"exit_code", report.exit_code()},
                                      {"passed", report.cases_passed()},
                                      {"failed", report.cases_failed()},
                                      {"skipped", report.cases_skipped()},
                                      {"unfinished", report.cases_unfinished()},
                                      {"lessons", lessons}}}};
    return document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace mgpu::judge
