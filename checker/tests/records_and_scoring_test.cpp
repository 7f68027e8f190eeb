// What the judge believes from a run's records, and how points follow from verdicts.
#include <doctest/doctest.h>

#include <string>

#include "case_runner.h"
#include "grading.h"
#include "record_seal.h"

using namespace mgpu::judge;

namespace {

// A run's records as the harness writes them: sealed with the run's key, numbered from 0.
struct Sealer {
    std::string key;
    int seq = 0;
    std::string operator()(const std::string& body) {
        const std::string json = "{" + body + ",\"seq\":" + std::to_string(seq++) + "}";
        return "\n" + mgpu::seal::sealed_line(key, json) + "\n";
    }
};

}  // namespace

TEST_CASE("HMAC-SHA256 gives RFC 4231's values") {
    // Test cases 1 and 2 of RFC 4231.
    CHECK(mgpu::seal::hmac_sha256_hex(std::string(20, '\x0b'), "Hi There") ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(mgpu::seal::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST_CASE("records not sealed with the run's key are ignored, whatever they say") {
    const std::string key = mgpu::seal::new_key();
    CHECK(key.size() == 64);
    CHECK(key != mgpu::seal::new_key());
    Sealer forger{mgpu::seal::new_key()};
    std::string text = forger("\"event\":\"case-start\",\"name\":\"x\"");
    text += forger("\"event\":\"case-end\",\"passed\":true");
    text += forger("\"event\":\"exit\",\"status\":0");
    text += "{\"event\":\"exit\",\"status\":0,\"seq\":0}\n[doctest] Status: SUCCESS!\n";
    CaseRecords records = read_records(text, key);
    CHECK_FALSE(records.started);
    CHECK_FALSE(records.ended);
    CHECK_FALSE(records.exit_record);
    CHECK_FALSE(records.broken);
    // A genuine line with one character changed is not the checker's any more.
    Sealer genuine{key};
    std::string changed = genuine("\"event\":\"case-end\",\"passed\":false");
    changed.replace(changed.find("false"), 5, "true ");
    CHECK_FALSE(read_records(changed, key).ended);
}

TEST_CASE("sealed records lost, repeated or written after the exit record break the run") {
    const std::string key = mgpu::seal::new_key();
    Sealer seal{key};
    const std::string start = seal("\"event\":\"case-start\",\"name\":\"x\"");
    const std::string end = seal("\"event\":\"case-end\",\"passed\":true");
    const std::string exit = seal("\"event\":\"exit\",\"status\":0");
    CHECK_FALSE(read_records(start + end + exit, key).broken);
    CHECK(read_records(start + end + exit, key).exit_record);
    CHECK(read_records(start + exit, key).broken);              // one taken away
    CHECK(read_records(start + start + end + exit, key).broken);  // one played twice
    CHECK(read_records(end + start + exit, key).broken);        // out of order
    Sealer after = seal;
    CHECK(read_records(start + end + exit + after("\"event\":\"case-end\",\"passed\":true"), key).broken);
}

TEST_CASE("a complete run with findings is read back") {
    const std::string key = mgpu::seal::new_key();
    Sealer line{key};
    // One statement each: the records are numbered in the order they are sealed.
    std::string text = "garbage without newline\n";
    text += line("\"event\":\"case-start\",\"name\":\"peer checks: a\"");
    text += line("\"event\":\"finding\",\"check\":\"c\",\"expected\":\"0\",\"observed\":\"1\","
                 "\"file\":\"peer_access.cu\",\"line\":42,\"scenario\":\"h200, eager\"");
    text += line("\"event\":\"case-end\",\"passed\":false,\"skipped\":false");
    text += line("\"event\":\"exit\",\"status\":1");
    CaseRecords records = read_records(text, key);
    CHECK(records.started);
    CHECK(records.started_name == "peer checks: a");
    CHECK(records.ended);
    CHECK(records.exit_record);
    CHECK(records.exit_status == 1);
    CHECK_FALSE(records.broken);
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
    const std::string key = mgpu::seal::new_key();
    Sealer line{key};
    std::string text = line("\"event\":\"case-start\",\"name\":\"async overlap: a\"");
    text += line("\"event\":\"timeline\",\"html\":\"<!DOCTYPE html><svg data-lane=\\\"stream\\\"></svg>\"");
    text += line("\"event\":\"case-end\",\"passed\":false,\"skipped\":false");
    CaseRecords records = read_records(text, key);
    CHECK(records.timeline_html == "<!DOCTYPE html><svg data-lane=\"stream\"></svg>");
    Sealer forger{mgpu::seal::new_key()};
    CHECK(read_records(forger("\"event\":\"timeline\",\"html\":\"x\""), key).timeline_html.empty());
}
