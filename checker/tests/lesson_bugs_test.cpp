// Each lesson's buggy corpus (bugs/<lesson id>/manifest.json): realistic mistakes written from the
// lesson text and the header alone, each as edits to one of the correct submissions of
// corpus/<lesson id>/ (its "base"), the way the mutants are edits to the reference solution. Each
// must lose points in exactly the criteria its entry names ("loses": what the mistake really
// breaks by the header) and keep every other criterion whole. An entry that also has "observed"
// is a known disagreement, a bug the grader does not catch yet or a criterion it takes wrongly:
// it is listed in the test's output, not graded, until a case catches it and "observed" goes.
// An entry with "explained" also says what the first failed case the student reads must say
// (check_first_explanation), and no finding of any entry may point into the kit's own files.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson_grading_support.h"

using namespace lesson_tests;
using namespace mgpu::judge;

LESSON_TEST_CASE("bugs: every realistic mistake loses its own criteria and only those") {
    const TestedLesson& tested = current_lesson();
    const std::string kit = std::string(MGPU_KIT_ROOT) + "/checker/tests/";
    const auto manifest = nlohmann::json::parse(read_text(kit + "bugs/" + tested.id + "/manifest.json"));
    REQUIRE(manifest.at("lesson").get<std::string>() == tested.id);
    REQUIRE(manifest.at("student_file").get<std::string>() == tested.student_file);
    const auto& submissions = manifest.at("submissions");
    std::size_t caught = 0;
    for (const auto& entry : submissions) caught += entry.contains("observed") ? 0 : 1;
    // The issue that asked for the buggy corpus wants at least 25 per lesson.
    CHECK(caught >= 25);
    for (std::size_t index = 0; index < submissions.size(); ++index) {
        if (!in_this_shard(index)) continue;
        const auto& entry = submissions[index];
        const std::string name = entry.at("name");
        CAPTURE(name);
        CAPTURE(entry.at("bug").get<std::string>());
        if (entry.contains("observed")) {
            MESSAGE("not caught as it should be yet: " << name << ": " << entry.value("note", ""));
            continue;
        }
        const std::string base = read_text(kit + "corpus/" + tested.id + "/" + entry.at("base").get<std::string>());
        const std::string source = apply_edits(base, entry.at("edits"));
        REQUIRE(source != base);
        GradeReport report = grade_submission(request_for(tested, write_submission(tested, "bug-" + name, source)));
        INFO(report_text(report));
        REQUIRE(report.kit_fault.empty());
        REQUIRE(report.lessons.size() == 1);
        const LessonResult& lesson = report.lessons[0];
        REQUIRE(lesson.outcome == LessonOutcome::Graded);
        const auto& loses = entry.at("loses");
        REQUIRE_FALSE(loses.empty());
        // A misspelt criterion in "loses" would otherwise read as "loses nothing there" and pass.
        for (const auto& lost : loses) {
            CAPTURE(lost.get<std::string>());
            CHECK(std::any_of(lesson.criteria.begin(), lesson.criteria.end(),
                              [&](const auto& result) { return result.criterion.name == lost; }));
        }
        for (const auto& result : lesson.criteria) {
            CAPTURE(result.criterion.name);
            if (std::find(loses.begin(), loses.end(), result.criterion.name) != loses.end()) {
                CHECK(result.earned < result.max - 1e-9);
            } else {
                CHECK(result.earned == doctest::Approx(result.max));
            }
        }
        CHECK(report.exit_code() == 1);
        // What the student reads first names the mistake, where the entry says how.
        if (entry.contains("explained")) check_first_explanation(report, tested, entry.at("explained"));
        check_report_reads_well(report, tested);
    }
}
