// Lesson 3's checker against the lesson's own material: the reference solution earns every
// point, the untouched skeleton builds and earns almost none, and the rubric and the mutants
// agree with the lesson text and the suite.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson03_support.h"

using namespace lesson03_tests;
using namespace mgpu::judge;

TEST_CASE("lesson 3: the reference solution earns every point") {
    GradeReport report = grade_submission(request_for(std::string(MGPU_KIT_ROOT) + "/solutions"));
    INFO(report_text(report));
    REQUIRE(report.lessons.size() == 1);
    const LessonResult& lesson = report.lessons[0];
    CHECK(lesson.outcome == LessonOutcome::Graded);
    CHECK(lesson.max_score == doctest::Approx(100));
    CHECK(lesson.score == doctest::Approx(100));
    CHECK(report.cases_skipped() == 0);
    CHECK(report.exit_code() == 0);
}

TEST_CASE("lesson 3: the skeleton builds, runs every check without crashing and earns at most 10%") {
    GradeReport report = grade_submission(request_for(std::string(MGPU_KIT_ROOT) + "/exercises"));
    INFO(report_text(report));
    REQUIRE(report.lessons.size() == 1);
    const LessonResult& lesson = report.lessons[0];
    CHECK(lesson.outcome == LessonOutcome::Graded);
    CHECK(lesson.score <= 0.10 * lesson.max_score);
    for (const auto& test : lesson.cases) {
        CAPTURE(test.name);
        CHECK((test.status == CaseStatus::Passed || test.status == CaseStatus::Failed));
    }
    CHECK(report.exit_code() == 1);
}

TEST_CASE("lesson 3: every criterion points at a section the lesson text has") {
    const Rubric rubric = load_rubric(std::string(MGPU_KIT_ROOT) + "/checker/lessons/03-peer-to-peer/rubric.json");
    const std::string text = read_text(std::string(MGPU_KIT_ROOT) + "/" + rubric.lesson_text);
    for (const auto& criterion : rubric.criteria) {
        CAPTURE(criterion.name);
        const std::string heading = "## " + criterion.section + " " + criterion.section_title + "\n";
        CHECK(text.find(heading) != std::string::npos);
    }
}

TEST_CASE("lesson 3: every mutant names a criterion of the rubric and exists") {
    const Rubric rubric = load_rubric(std::string(MGPU_KIT_ROOT) + "/checker/lessons/03-peer-to-peer/rubric.json");
    const std::string folder = std::string(MGPU_KIT_ROOT) + "/checker/lessons/03-peer-to-peer/mutants/";
    auto manifest = nlohmann::json::parse(read_text(folder + "manifest.json"));
    std::set<std::string> covered;
    for (const auto& mutant : manifest.at("mutants")) {
        const std::string file = mutant.at("file");
        CAPTURE(file);
        CHECK(rubric.find(mutant.at("criterion")) != nullptr);
        CHECK(std::ifstream(folder + file).good());
        covered.insert(mutant.at("criterion").get<std::string>());
    }
    for (const auto& criterion : rubric.criteria) {
        CAPTURE(criterion.name);
        CHECK(covered.count(criterion.name) == 1);   // every criterion has a mutant that must lose it
    }
}
