// Each lesson's corpus (corpus/<lesson id>/manifest.json): submissions written from the lesson text
// and the header alone, in the styles students really use (a thread per device, OpenMP, one thread
// with streams, the legacy default stream, the text's own snippets, other ways of handling errors).
// Every one of them is correct by the header, so every one earns every point of every criterion on
// every machine the lesson's checker runs on. A correct submission marked down is a grader bug.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "lesson_grading_support.h"

using namespace lesson_tests;
using namespace mgpu::judge;

LESSON_TEST_CASE("corpus: every submission written from the text and the header earns every point") {
    const TestedLesson& tested = current_lesson();
    const std::string folder = std::string(MGPU_KIT_ROOT) + "/checker/tests/corpus/" + tested.id + "/";
    const auto manifest = nlohmann::json::parse(read_text(folder + "manifest.json"));
    REQUIRE(manifest.at("lesson").get<std::string>() == tested.id);
    REQUIRE(manifest.at("student_file").get<std::string>() == tested.student_file);
    const auto& submissions = manifest.at("submissions");
    // The issue that asked for the corpus wants at least 15 styles per lesson.
    CHECK(submissions.size() >= 15);
    for (std::size_t index = 0; index < submissions.size(); ++index) {
        if (!in_this_shard(index)) continue;
        const auto& entry = submissions[index];
        const std::string name = entry.at("name");
        CAPTURE(name);
        const std::string source = read_text(folder + entry.at("file").get<std::string>());
        GradeReport report = grade_submission(request_for(tested, write_submission(tested, "corpus-" + name, source)));
        INFO(report_text(report));
        REQUIRE(report.kit_fault.empty());
        REQUIRE(report.lessons.size() == 1);
        const LessonResult& lesson = report.lessons[0];
        CHECK(lesson.outcome == LessonOutcome::Graded);
        for (const auto& result : lesson.criteria) {
            CAPTURE(result.criterion.name);
            CHECK(result.earned == doctest::Approx(result.max));
        }
        // Only a race case skips, where the compiler has no working ThreadSanitizer (docs/host-races.md).
        for (const auto& test : lesson.cases) {
            if (test.status != CaseStatus::Skipped) continue;
            CAPTURE(test.name);
            CHECK(test.reason.find("ThreadSanitizer") != std::string::npos);
        }
        CHECK(report.exit_code() == 0);
    }
}
