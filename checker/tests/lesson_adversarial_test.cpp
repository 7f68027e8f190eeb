// Submissions that try to break or fool a lesson's checker (adversarial/<the lesson's file>.json): each one
// ends with a clear reason in the report, the documented exit code, and a grader that is fine.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lesson_grading_support.h"
#include "reports.h"

using namespace lesson_tests;
using namespace mgpu::judge;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Replaces every @NAME@ of `values` in `text`: entries name the kit, the student's own folder, a
// classmate's file and another checkout of the kit by these placeholders, since the paths differ
// from one checkout to another.
std::string fill_in(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
    for (const auto& [name, value] : values) {
        for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + value.size())) {
            text.replace(at, name.size(), value);
        }
    }
    return text;
}

// Everything a student reads about one failed case.
std::string case_text(const CaseResult& test) {
    std::string text = test.reason + "\n" + test.output_tail;
    for (const auto& finding : test.findings) text += "\n" + finding.check + " " + finding.expected + " " + finding.observed;
    return text;
}

// Another checkout of the kit with this lesson's reference solution, as a student might find one
// on a shared machine: outside the kit, its build and /tmp (which the sandbox replaces anyway).
struct AnotherCheckout {
    std::filesystem::path root;
    AnotherCheckout(const TestedLesson& tested, const std::string& solution)
        : root(std::filesystem::path("/var/tmp") / ("mgpu-another-checkout-" + std::to_string(::getpid()))) {
        const auto folder = root / "solutions" / tested.id;
        std::filesystem::create_directories(folder);
        std::ofstream(folder / tested.student_file, std::ios::binary) << solution;
    }
    ~AnotherCheckout() {
        std::error_code ignored;
        std::filesystem::remove_all(root, ignored);
    }
};

}  // namespace

LESSON_TEST_CASE("adversarial submissions get a clear reason and the documented exit code") {
    const TestedLesson& tested = current_lesson();
    const auto manifest =
        nlohmann::json::parse(read_text(std::string(MGPU_KIT_ROOT) + "/checker/tests/adversarial/" + tested.adversarial));
    const std::string solution = solution_source(tested);
    const AnotherCheckout elsewhere(tested, solution);
    const auto& submissions = manifest.at("submissions");
    for (std::size_t index = 0; index < submissions.size(); ++index) {
        if (!in_this_shard(index)) continue;
        const auto& entry = submissions[index];
        const std::string name = entry.at("name");
        CAPTURE(name);
        // A classmate's folder beside this submission, with a file the entry may try to read.
        const std::string classmate = write_submission(tested, "other-student", solution) + "/" + tested.id + "/" +
                                      tested.student_file;
        const std::string own_dir = write_submission(tested, "adversarial-" + name, "");
        const std::vector<std::pair<std::string, std::string>> values = {
            {"@KIT_ROOT@", MGPU_KIT_ROOT}, {"@OTHER_STUDENT@", classmate}, {"@OWN_DIR@", own_dir},
            {"@ELSEWHERE@", elsewhere.root.string()}};
        const std::string source = entry.contains("source") ? fill_in(entry.at("source").get<std::string>(), values)
                                                            : fill_in(apply_edits(solution, entry.at("edits")), values);
        const int exit_code = entry.at("exit_code");
        GradeRequest request = request_for(tested, write_submission(tested, "adversarial-" + name, source));
        // An entry that must be graded as the correct code it is keeps grading's own CPU limit: the
        // short one is for entries that loop on purpose, and would make a correct case on a busy
        // machine look like one.
        if (exit_code != 0) request.case_cpu_seconds = endless_loop_cpu_seconds();
        request.memory_limit_bytes = std::size_t{1} << 30;
        // Entries that wait on purpose (a sleep, a deadlock) or compile forever need only short limits.
        request.case_blocked_seconds = entry.value("blocked_seconds", request.case_blocked_seconds);
        request.compile_cpu_seconds = entry.value("compile_cpu_seconds", 60.0);
        GradeReport report = grade_submission(request);
        INFO(report_text(report));
        REQUIRE(report.kit_fault.empty());
        REQUIRE(report.lessons.size() == 1);
        const LessonResult& lesson = report.lessons[0];
        CHECK(report.exit_code() == exit_code);

        if (exit_code == 3) {
            CHECK(lesson.outcome == LessonOutcome::NotBuilt);
            CHECK(lesson.problem_kind == entry.at("problem_kind").get<std::string>());
            CHECK(lesson.score == 0);
            const std::string json = gradescope_json(report);
            const std::string junit = junit_xml(report);
            const std::string terminal = terminal_report(report, false, false);
            for (const auto& words : entry.at("problem_words")) {
                CAPTURE(words.get<std::string>());
                CHECK(contains(lesson.problem, words));
                CHECK(contains(terminal, words));
            }
            for (const auto& words : entry.value("absent_words", nlohmann::json::array())) {
                CAPTURE(words.get<std::string>());
                CHECK_FALSE(contains(lesson.problem, words));
                CHECK_FALSE(contains(terminal, words));
            }
            CHECK(contains(json, lesson.problem_kind));
            CHECK(contains(junit, lesson.problem_kind));
            continue;
        }

        REQUIRE(lesson.outcome == LessonOutcome::Graded);
        if (exit_code == 0) {   // the attack was held off: the submission is graded as the correct code it also is
            CHECK(lesson.score == doctest::Approx(lesson.max_score));
            continue;
        }
        bool status_seen = false, words_seen = false;
        for (const auto& test : lesson.cases) {
            if (!counts_as_failed(test.status)) continue;
            for (const auto& status : entry.at("failing_statuses")) {
                if (to_string(test.status) != status.get<std::string>()) continue;
                status_seen = true;
                bool all_words = true;
                for (const auto& words : entry.at("reason_words")) all_words = all_words && contains(case_text(test), words);
                words_seen = words_seen || all_words;
            }
        }
        CHECK(status_seen);
        CHECK(words_seen);
        for (const auto& intact : entry.at("intact_criteria")) {
            const CriterionResult& result = criterion(lesson, intact);
            CAPTURE(result.criterion.name);
            CHECK(result.earned == doctest::Approx(result.max));
        }
    }
}
