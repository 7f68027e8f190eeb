// Each lesson's checker against the lesson's own material (one copy of each test case per tested
// lesson, as the mutants test has): the reference solution earns every
// point, the untouched skeleton builds and earns almost none, and the rubric and the mutants
// agree with the lesson text and the suite.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "lesson_grading_support.h"
#include "lesson_catalog.h"
#include "process_runner.h"
#include "submission_build.h"

using namespace lesson_tests;
using namespace mgpu::judge;

LESSON_TEST_CASE("the reference solution earns every point") {
    GradeReport report = grade_submission(request_for(current_lesson(), std::string(MGPU_KIT_ROOT) + "/solutions"));
    INFO(report_text(report));
    REQUIRE(report.lessons.size() == 1);
    const LessonResult& lesson = report.lessons[0];
    CHECK(lesson.outcome == LessonOutcome::Graded);
    CHECK(lesson.max_score == doctest::Approx(100));
    CHECK(lesson.score == doctest::Approx(100));
    // Only a race case skips, and only where this machine's compiler has no working ThreadSanitizer
    // (docs/host-races.md).
    for (const auto& test : lesson.cases) {
        if (test.status != CaseStatus::Skipped) continue;
        CAPTURE(test.name);
        CHECK(test.reason.find("ThreadSanitizer") != std::string::npos);
    }
    CHECK(report.exit_code() == 0);
    // Correct code stays far below grading's own CPU limit per case: a quarter of it leaves room for a
    // machine twice as slow and twice as busy as this one. (Held to a tighter figure, this test would
    // measure the machine, not the checker.)
    const double grading_limit = request_for(current_lesson(), "").case_cpu_seconds;
    for (const auto& test : lesson.cases) {
        CAPTURE(test.name);
        CHECK(test.cpu_seconds < grading_limit / 4);
    }
}

// A precompiled header made with other macros than the compile (-fopenmp defines _OPENMP) is
// passed over without a word, and every submission of the lesson then compiles the simulator's
// headers from their text: about twice the time.
LESSON_TEST_CASE("the lesson's precompiled prelude serves its submissions' compiles") {
    LessonPaths paths;
    paths.kit_root = MGPU_KIT_ROOT;
    paths.lessons_dir = std::string(MGPU_KIT_ROOT) + "/checker/lessons";
    paths.lessons_build_dir = request_for(current_lesson(), "").lessons_build_dir;
    const std::vector<Lesson> lessons = load_lessons(paths);
    const Lesson* lesson = nullptr;
    for (const Lesson& candidate : lessons)
        if (candidate.id == current_lesson().id) lesson = &candidate;
    REQUIRE(lesson != nullptr);
    const LessonBuild build = load_lesson_build(lesson->build_manifest);
    REQUIRE_FALSE(build.prelude.empty());
    std::filesystem::create_directories(MGPU_CHECKER_TEST_CACHE);
    const std::string source = std::string(MGPU_CHECKER_TEST_CACHE) + "/prelude-probe-" + lesson->id + ".cpp";
    std::ofstream(source) << "int probe() { return 0; }\n";
    // The race cases' build has a prelude of its own (docs/host-races.md).
    for (const bool race_build : {false, true}) {
        if (race_build && build.race_flags.empty()) continue;
        CAPTURE(race_build);
        ProcessSpec spec;
        spec.argv = simulator_compile_command(*lesson, build, true, race_build);
        spec.argv.insert(spec.argv.end(), {"-Winvalid-pch", "-Werror=invalid-pch", "-fsyntax-only", source});
        spec.environment = {"PATH=" + judge_path_variable(), "LC_ALL=C"};
        spec.limits.cpu_seconds = 60;
        const ProcessOutcome outcome = run_process(spec);
        INFO(outcome.output);
        CHECK(outcome.exited);
        CHECK(outcome.exit_code == 0);
    }
}

LESSON_TEST_CASE("the skeleton builds, runs every check without crashing and earns at most 10%") {
    GradeReport report = grade_submission(request_for(current_lesson(), std::string(MGPU_KIT_ROOT) + "/exercises"));
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

LESSON_TEST_CASE("every criterion points at a section the lesson text has") {
    const Rubric rubric = load_rubric(std::string(MGPU_KIT_ROOT) + "/checker/lessons/" + current_lesson().id + "/rubric.json");
    const std::string text = read_text(std::string(MGPU_KIT_ROOT) + "/" + rubric.lesson_text);
    for (const auto& criterion : rubric.criteria) {
        CAPTURE(criterion.name);
        const std::string heading = "## " + criterion.section + " " + criterion.section_title + "\n";
        CHECK(text.find(heading) != std::string::npos);
    }
}

LESSON_TEST_CASE("every mutant names a criterion of the rubric and exists") {
    const TestedLesson& tested = current_lesson();
    const Rubric rubric = load_rubric(std::string(MGPU_KIT_ROOT) + "/checker/lessons/" + tested.id + "/rubric.json");
    const std::string manifest_path = std::string(MGPU_KIT_ROOT) + "/checker/lessons/" + tested.id + "/mutants/manifest.json";
    const std::string folder = std::string(tested.mutants_dir) + "/";   // generated by the build
    auto manifest = nlohmann::json::parse(read_text(manifest_path));
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
