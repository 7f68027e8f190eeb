// What the judge believes from a run's records, and how points follow from verdicts.
#include <doctest/doctest.h>

#include <string>

#include "case_runner.h"
#include "grading.h"

using namespace mgpu::judge;

namespace {

std::string line(const std::string& nonce, const std::string& body) {
    return "{\"nonce\":\"" + nonce + "\"," + body + "}\n";
}

}  // namespace

TEST_CASE("records without the run's nonce are ignored") {
    const std::string nonce = "0123abcd";
    std::string text = line("forged", "\"event\":\"case-start\",\"name\":\"x\"") +
                       line("forged", "\"event\":\"case-end\",\"passed\":true") +
                       line("forged", "\"event\":\"exit\",\"status\":0") + "[doctest] Status: SUCCESS!\n";
    CaseRecords records = read_records(text, nonce);
    CHECK_FALSE(records.started);
    CHECK_FALSE(records.ended);
    CHECK_FALSE(records.exit_record);
}

TEST_CASE("a complete run with findings is read back") {
    const std::string nonce = new_nonce();
    CHECK(nonce.size() == 32);
    std::string text = "garbage without newline" + std::string("\n") +
                       line(nonce, "\"event\":\"case-start\",\"name\":\"peer checks: a\"") +
                       line(nonce, "\"event\":\"finding\",\"check\":\"c\",\"expected\":\"0\",\"observed\":\"1\","
                                   "\"file\":\"peer_access.cu\",\"line\":42,\"scenario\":\"h200, eager\"") +
                       line(nonce, "\"event\":\"case-end\",\"passed\":false,\"skipped\":false") +
                       line(nonce, "\"event\":\"exit\",\"status\":1");
    CaseRecords records = read_records(text, nonce);
    CHECK(records.started);
    CHECK(records.started_name == "peer checks: a");
    CHECK(records.ended);
    CHECK(records.exit_record);
    CHECK_FALSE(records.passed);
    REQUIRE(records.findings.size() == 1);
    CHECK(records.findings[0].file == "peer_access.cu");
    CHECK(records.findings[0].line == 42);
    CHECK(records.findings[0].expected == "0");
    CHECK(records.findings[0].observed == "1");
}

TEST_CASE("two nonces are never the same") {
    CHECK(new_nonce() != new_nonce());
}

TEST_CASE("criteria come from the part of the name before ': '") {
    CHECK(criterion_of("peer checks: same device is not a peer") == "peer checks");
    CHECK(criterion_of("no criterion here") == "");
}

TEST_CASE("points are shared within a criterion and skipped cases leave the maximum") {
    Rubric rubric;
    rubric.criteria = {{"a", 30, "", "", ""}, {"b", 20, "", "", ""}};
    LessonResult lesson;
    auto add = [&](const std::string& criterion, CaseStatus status) {
        CaseResult test;
        test.name = criterion + ": case " + std::to_string(lesson.cases.size());
        test.criterion = criterion;
        test.status = status;
        lesson.cases.push_back(test);
    };
    add("a", CaseStatus::Passed);
    add("a", CaseStatus::Failed);
    add("a", CaseStatus::Crashed);
    add("b", CaseStatus::Passed);
    add("b", CaseStatus::Skipped);
    score_lesson(rubric, &lesson);
    REQUIRE(lesson.criteria.size() == 2);
    CHECK(lesson.criteria[0].earned == doctest::Approx(10));
    CHECK(lesson.criteria[0].max == doctest::Approx(30));
    CHECK(lesson.criteria[0].failed == 2);
    CHECK(lesson.criteria[1].earned == doctest::Approx(10));
    CHECK(lesson.criteria[1].max == doctest::Approx(10));
    CHECK(lesson.criteria[1].skipped == 1);
    CHECK(lesson.score == doctest::Approx(20));
    CHECK(lesson.max_score == doctest::Approx(40));
}

TEST_CASE("a lesson that was not built scores zero of its full points") {
    Rubric rubric;
    rubric.criteria = {{"a", 30, "", "", ""}, {"b", 20, "", "", ""}};
    LessonResult lesson;
    lesson.outcome = LessonOutcome::NotBuilt;
    score_lesson(rubric, &lesson);
    CHECK(lesson.score == 0);
    CHECK(lesson.max_score == doctest::Approx(50));
}

TEST_CASE("exit codes: kit fault over not built over failed") {
    GradeReport report;
    report.lessons.resize(2);
    CHECK(report.exit_code() == 0);
    report.lessons[0].cases.push_back(CaseResult{});
    report.lessons[0].cases.back().status = CaseStatus::TimedOut;
    CHECK(report.exit_code() == 1);
    report.lessons[1].outcome = LessonOutcome::NotBuilt;
    CHECK(report.exit_code() == 3);
    report.lessons[1].outcome = LessonOutcome::KitFault;
    CHECK(report.exit_code() == 4);
}

TEST_CASE("a case's timeline page is read back with its findings") {
    const std::string nonce = new_nonce();
    const std::string text = line(nonce, "\"event\":\"case-start\",\"name\":\"async overlap: a\"") +
                             line(nonce, "\"event\":\"timeline\",\"html\":\"<!DOCTYPE html><svg data-lane=\\\"stream\\\"></svg>\"") +
                             line(nonce, "\"event\":\"case-end\",\"passed\":false,\"skipped\":false");
    CaseRecords records = read_records(text, nonce);
    CHECK(records.timeline_html == "<!DOCTYPE html><svg data-lane=\"stream\"></svg>");
    CHECK(read_records(line("forged", "\"event\":\"timeline\",\"html\":\"x\""), nonce).timeline_html.empty());
}
