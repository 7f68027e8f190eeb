// Each mutant of a lesson's reference solution (broken in one way on purpose, generated into the
// build folder from checker/lessons/<lesson id>/mutants/manifest.json) must lose points in exactly
// the criterion its manifest names, and only there.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson_grading_support.h"

using namespace lesson_tests;
using namespace mgpu::judge;

LESSON_TEST_CASE("each mutant loses points in its criterion and only there") {
    const TestedLesson& tested = current_lesson();
    const std::string manifest_path =
        std::string(MGPU_KIT_ROOT) + "/checker/lessons/" + tested.id + "/mutants/manifest.json";
    const std::string folder = std::string(tested.mutants_dir) + "/";
    const auto manifest = nlohmann::json::parse(read_text(manifest_path));
    const auto& mutants = manifest.at("mutants");
    for (std::size_t index = 0; index < mutants.size(); ++index) {
        if (!in_this_shard(index)) continue;
        const std::string file = mutants[index].at("file");
        const std::string expected = mutants[index].at("criterion");
        const std::string name = file.substr(0, file.rfind('.'));
        GradeReport report = grade_submission(request_for(tested, write_submission(tested, "mutant-" + name, read_text(folder + file))));
        CAPTURE(file);
        CAPTURE(mutants[index].at("description").get<std::string>());
        INFO(report_text(report));
        REQUIRE(report.lessons.size() == 1);
        const LessonResult& lesson = report.lessons[0];
        REQUIRE(lesson.outcome == LessonOutcome::Graded);
        for (const auto& result : lesson.criteria) {
            CAPTURE(result.criterion.name);
            if (result.criterion.name == expected) {
                CHECK(result.earned < result.max - 1e-9);
            } else {
                CHECK(result.earned == doctest::Approx(result.max));
            }
        }
        CHECK(report.exit_code() == 1);
        // The first failed case the student reads must name the mistake, where the manifest says how
        // ("first_message": its phrases only; "explained": phrases, section and place).
        if (mutants[index].contains("first_message"))
            check_first_explanation(report, tested, nlohmann::json{{"says", mutants[index].at("first_message")}});
        if (mutants[index].contains("explained")) check_first_explanation(report, tested, mutants[index].at("explained"));
        // Every finding points into the student's file or names the grader's set-up as such.
        check_report_reads_well(report, tested);
    }
}

// A failed overlap case attaches what ran as a timeline page; the checker carries the student's
// file, so the page names each stream lane by the variable the student's cudaStreamCreate filled.
TEST_CASE("lesson 3: the timeline of a failed overlap case names each stream lane by the student's variable") {
    if (!in_this_shard(0)) return;
    const TestedLesson& tested = tested_lesson(3);
    const std::string source = read_text(std::string(tested.mutants_dir) + "/pipeline-device-synchronize.cu");
    GradeRequest request = request_for(tested, write_submission(tested, "timeline-names", source));
    request.timeline_dir = std::string(MGPU_CHECKER_TEST_CACHE) + "/timeline-names-pages";
    const GradeReport report = grade_submission(request);
    INFO(report_text(report));
    REQUIRE(report.lessons.size() == 1);
    std::string page_file;
    for (const auto& result : report.lessons[0].cases)
        if (!result.timeline_file.empty() && page_file.empty()) page_file = result.timeline_file;
    REQUIRE_MESSAGE(!page_file.empty(), "no failed case attached a timeline");
    CHECK(report_text(report).find("timeline: " + page_file) != std::string::npos);
    const std::string page = read_text(page_file);
    CHECK(page.find("data-lane=\"stream\"") != std::string::npos);
    // The streams the student's own file creates, read from it here, each name a lane.
    static const std::regex created(R"(cudaStreamCreate\w*\s*\(\s*&\s*([A-Za-z_][A-Za-z0-9_.]*))");
    int names = 0;
    for (auto it = std::sregex_iterator(source.begin(), source.end(), created); it != std::sregex_iterator(); ++it) {
        const std::string variable = (*it)[1].str();
        CAPTURE(variable);
        CHECK(page.find("\u00b7 " + variable + "</text>") != std::string::npos);
        ++names;
    }
    CHECK(names >= 2);
}
