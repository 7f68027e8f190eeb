// The three report formats say the same things: points, failed checks with expected and observed
// values and where, skipped cases as skipped, and why a submission was not built.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "reports.h"

using namespace mgpu::judge;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CaseResult make_case(const std::string& name, const std::string& criterion, CaseStatus status) {
    CaseResult test;
    test.name = name;
    test.criterion = criterion;
    test.status = status;
    return test;
}

GradeReport graded_report() {
    Rubric rubric;
    rubric.lesson_text = "lessons/03-peer-to-peer/README.md";
    rubric.criteria = {{"peer checks", 20, "3.2", "Check before you trust", ""},
                       {"cleanup", 20, "3.9", "Turn it off when done", ""}};
    LessonResult lesson;
    lesson.number = 3;
    lesson.id = "03-peer-to-peer";
    lesson.title = "Peer-to-peer memory access";
    lesson.lesson_text = rubric.lesson_text;
    lesson.submission_files = {"exercises/03-peer-to-peer/peer_access.cu"};
    CaseResult passed = make_case("peer checks: same device is not a peer", "peer checks", CaseStatus::Passed);
    CaseResult failed = make_case("peer checks: islands <2x2> do not reach across", "peer checks", CaseStatus::Failed);
    failed.scenario = "islands-2x2, eager";
    failed.findings.push_back({"can_reach(0, 2)", "false", "true", "peer_access.cu", 17, "islands-2x2, eager"});
    CaseResult crashed = make_case("cleanup: close restores the device", "cleanup", CaseStatus::Crashed);
    crashed.reason = "crashed: segmentation fault (SIGSEGV)";
    crashed.output_tail = "last words\x1b[2J";
    CaseResult skipped = make_case("cleanup: needs 16 GPUs", "cleanup", CaseStatus::Skipped);
    skipped.reason = "needs 16 GPUs";
    lesson.cases = {passed, failed, crashed, skipped};
    score_lesson(rubric, &lesson);
    GradeReport report;
    report.seed = 77;
    report.lessons.push_back(lesson);
    return report;
}

GradeReport unbuilt_report() {
    Rubric rubric;
    rubric.criteria = {{"peer checks", 20, "", "", ""}};
    LessonResult lesson;
    lesson.number = 3;
    lesson.id = "03-peer-to-peer";
    lesson.title = "Peer-to-peer memory access";
    lesson.outcome = LessonOutcome::NotBuilt;
    lesson.problem_kind = "compile error";
    lesson.problem = "peer_access.cu:3:30: error: expected ';' before '}' token";
    lesson.submission_files = {"sub/03-peer-to-peer/peer_access.cu"};
    score_lesson(rubric, &lesson);
    GradeReport report;
    report.lessons.push_back(lesson);
    return report;
}

}  // namespace

TEST_CASE("the terminal report shows the table, what to fix and where to read") {
    GradeReport report = graded_report();
    std::string text = terminal_report(report, false, false);
    CHECK(contains(text, "peer checks"));
    CHECK(contains(text, "10 / 20"));
    CHECK(contains(text, "expected: false"));
    CHECK(contains(text, "observed: true"));
    CHECK(contains(text, "peer_access.cu:17"));
    CHECK(contains(text, "read lessons/03-peer-to-peer/README.md section 3.2 (Check before you trust)"));
    CHECK(contains(text, "segmentation fault"));
    CHECK(contains(text, "needs 16 GPUs"));
    CHECK_FALSE(contains(text, "\x1b"));
    CHECK(contains(text, "1 passed, 2 failed, 1 skipped\n"));
}

TEST_CASE("the totals line counts test cases") {
    CHECK(totals_line(graded_report()) == "1 passed, 2 failed, 1 skipped");
    CHECK(totals_line(unbuilt_report()) == "0 passed, 0 failed");
}

TEST_CASE("results.json follows Gradescope's schema") {
    json document = json::parse(gradescope_json(graded_report()));
    CHECK(document["score"].get<double>() == doctest::Approx(10 + 0));
    CHECK(document["max_score"].get<double>() == doctest::Approx(20 + 10));
    CHECK(document.contains("execution_time"));
    CHECK(document.contains("output"));
    REQUIRE(document["tests"].size() == 4);
    CHECK(document["tests"][0]["status"] == "passed");
    CHECK(document["tests"][1]["status"] == "failed");
    CHECK(contains(document["tests"][1]["name"].get<std::string>(), "peer checks"));
    CHECK(contains(document["tests"][1]["output"].get<std::string>(), "expected: false"));
    CHECK(contains(document["tests"][1]["output"].get<std::string>(), "section 3.2"));
    CHECK_FALSE(document["tests"][3].contains("status"));   // skipped: neither passed nor failed
    CHECK(document["tests"][3]["max_score"].get<double>() == 0);
}

TEST_CASE("JUnit XML marks failures, errors and skips, escaped") {
    std::string xml = junit_xml(graded_report());
    CHECK(contains(xml, "tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""));
    CHECK(contains(xml, "<skipped message=\"needs 16 GPUs\"/>"));
    CHECK(contains(xml, "islands &lt;2x2&gt;"));
    CHECK(contains(xml, "<error type=\"crashed\""));
    CHECK_FALSE(contains(xml, "\x1b"));
}

TEST_CASE("a submission that was not built says why in every format") {
    GradeReport report = unbuilt_report();
    CHECK(report.exit_code() == 3);
    const std::string reason = "expected ';' before";
    CHECK(contains(terminal_report(report, false, false), reason));
    CHECK(contains(terminal_report(report, false, false), "Could not be built (compile error)"));
    json document = json::parse(gradescope_json(report));
    CHECK(document["score"] == 0);
    CHECK(contains(document["output"].get<std::string>(), reason));
    CHECK(contains(document["tests"][0]["output"].get<std::string>(), reason));
    CHECK(document["tests"][0]["status"] == "failed");
    std::string xml = junit_xml(report);
    CHECK(contains(xml, "expected &apos;;&apos; before"));
    CHECK(contains(xml, "<error type=\"compile error\""));
}

TEST_CASE("the terminal shows first the failed case whose finding names a cause, and a finding's own section") {
    Rubric rubric;
    rubric.lesson_text = "lessons/03-peer-to-peer/README.md";
    rubric.criteria = {{"async overlap", 20, "3.10", "Async peer copies", ""}};
    LessonResult lesson;
    lesson.number = 3;
    lesson.title = "Peer-to-peer memory access";
    lesson.lesson_text = rubric.lesson_text;
    CaseResult wrong = make_case("async overlap: results under a lazy schedule", "async overlap", CaseStatus::Failed);
    CheckFinding elements{"dst[i] == factor * src[i]", "dst[0] = 2", "dst[0] = 7; 9 of 9 elements wrong", "", 0, ""};
    elements.symptom = true;
    wrong.findings.push_back(elements);
    CaseResult cause = make_case("async overlap: each kernel waits for its chunk", "async overlap", CaseStatus::Failed);
    CheckFinding early{"chunk 0's kernel read the chunk before its copy arrived", "after", "before", "peer_access.cu", 9, ""};
    early.section = "3.9";
    cause.findings.push_back(early);
    lesson.cases = {wrong, cause};
    score_lesson(rubric, &lesson);
    GradeReport report;
    report.lessons = {lesson};
    const std::string text = terminal_report(report, false, false);
    REQUIRE(contains(text, "each kernel waits for its chunk"));
    REQUIRE(contains(text, "results under a lazy schedule"));
    CHECK(text.find("each kernel waits for its chunk") < text.find("results under a lazy schedule"));
    CHECK(contains(text, "read:     lessons/03-peer-to-peer/README.md section 3.9"));
    CHECK(contains(gradescope_json(report), "section 3.9"));
}

TEST_CASE("--all shows every failed case where the default shows the first few of a criterion") {
    Rubric rubric;
    rubric.lesson_text = "lessons/03-peer-to-peer/README.md";
    rubric.criteria = {{"cleanup", 20, "3.11", "Turning it off", ""}};
    LessonResult lesson;
    lesson.number = 3;
    lesson.title = "Peer-to-peer memory access";
    lesson.lesson_text = rubric.lesson_text;
    for (int i = 0; i < 7; ++i) {
        CaseResult test = make_case("cleanup: case " + std::to_string(i), "cleanup", CaseStatus::Failed);
        test.findings.push_back({"check " + std::to_string(i), "a", "b", "", 0, ""});
        lesson.cases.push_back(test);
    }
    score_lesson(rubric, &lesson);
    GradeReport report;
    report.lessons = {lesson};
    const std::string some = terminal_report(report, false, false);
    const std::string every = terminal_report(report, false, false, true);
    CHECK_FALSE(contains(some, "cleanup: case 6") );
    CHECK_FALSE(contains(some, "check 6"));
    CHECK(contains(some, "show them all with --all"));
    CHECK(contains(every, "check 6"));
    CHECK_FALSE(contains(every, "--all"));
}

TEST_CASE("a failed case's timeline is named under its findings") {
    GradeReport report = graded_report();
    report.lessons[0].cases[1].timeline_file = "/kit/.mgpu/timelines/03-peer-to-peer/peer-checks-islands.html";
    const std::string text = terminal_report(report, false, false);
    CHECK(contains(text, "      timeline: /kit/.mgpu/timelines/03-peer-to-peer/peer-checks-islands.html (open it in a web "
                         "browser"));
    CHECK_FALSE(contains(terminal_report(graded_report(), false, false), "timeline:"));
}
