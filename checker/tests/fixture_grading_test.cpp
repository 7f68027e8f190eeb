// The judge end to end on its test lesson (fixtures/): each submission in fixtures/submissions
// is built, run case by case in the sandbox and scored. Points expected here follow from the
// fixture's rubric: "sums" 60 points over 3 cases, "division" 40 over 4 (one always skipped).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "grading.h"
#include "process_table.h"
#include "reports.h"

using namespace mgpu::judge;
using checker_tests::process_remains;
namespace fs = std::filesystem;

namespace {

GradeRequest fixture_request(const std::string& submission) {
    GradeRequest request;
    request.kit_root = MGPU_KIT_ROOT;
    request.submission_dir = std::string(MGPU_FIXTURE_SUBMISSIONS) + "/" + submission;
    request.lessons_dir = MGPU_FIXTURE_LESSONS;
    request.lessons_build_dir = MGPU_FIXTURE_LESSONS_BUILD;
    request.cache_dir = MGPU_CHECKER_TEST_CACHE;
    // The endless loop costs this much CPU time per case; the suite's correct cases use a few ms.
    request.case_cpu_seconds = 3;
    request.case_blocked_seconds = 2;
    request.memory_limit_bytes = std::size_t{256} << 20;
    request.output_limit_bytes = std::size_t{1} << 20;
    request.jobs = 2;
    request.seed = 12345;
    return request;
}

GradeReport grade(const std::string& submission) {
    GradeReport report = grade_submission(fixture_request(submission));
    INFO(terminal_report(report, false, false));
    REQUIRE(report.kit_fault.empty());
    REQUIRE(report.lessons.size() == 1);
    return report;
}

const CaseResult& find_case(const GradeReport& report, const std::string& name) {
    for (const auto& test : report.lessons[0].cases) {
        if (test.name == name) return test;
    }
    FAIL("no case " << name);
    throw 0;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

int count_status(const GradeReport& report, CaseStatus status) {
    int count = 0;
    for (const auto& test : report.lessons[0].cases) count += test.status == status ? 1 : 0;
    return count;
}


}  // namespace

TEST_CASE("a correct submission gets every point that can be earned here, the skip aside") {
    GradeReport report = grade("good");
    INFO(terminal_report(report, false, false));
    const LessonResult& lesson = report.lessons[0];
    CHECK(lesson.outcome == LessonOutcome::Graded);
    CHECK(lesson.cases.size() == 7);
    CHECK(count_status(report, CaseStatus::Passed) == 6);
    CHECK(count_status(report, CaseStatus::Skipped) == 1);
    CHECK(lesson.score == doctest::Approx(90));
    CHECK(lesson.max_score == doctest::Approx(90));
    CHECK(report.exit_code() == 0);
    CHECK(contains(find_case(report, "division: needs more GPUs than any machine has").reason, "64 GPUs"));

    SUBCASE("the second grading of the same file comes from the cache") {
        GradeReport again = grade("good");
        CHECK(again.lessons[0].build_cached);
        CHECK(again.lessons[0].score == doctest::Approx(90));
    }
}

TEST_CASE("without namespaces (process groups only) the judge grades the same") {
    GradeRequest request = fixture_request("crash");
    request.sandbox = false;
    GradeReport report = grade_submission(request);
    REQUIRE(report.lessons.size() == 1);
    CHECK(report.sandbox.rfind("process group", 0) == 0);
    CHECK(find_case(report, "division: by zero gives 0").status == CaseStatus::Crashed);
    CHECK(count_status(report, CaseStatus::Passed) == 5);
}

TEST_CASE("the cuda backend is refused with a reason; auto grades on the simulator") {
    GradeRequest request = fixture_request("good");
    request.backend = "cuda";
    GradeReport refused = grade_submission(request);
    CHECK(refused.exit_code() == 4);
    CHECK(contains(refused.kit_fault, "'cuda' backend"));
    request.backend = "auto";
    GradeReport automatic = grade_submission(request);
    CHECK(automatic.exit_code() == 0);
    CHECK(automatic.backend == "sim");
}

TEST_CASE("restricting the run to one machine skips the cases of other machines") {
    GradeRequest request = fixture_request("good");
    request.topology = "h200";
    GradeReport report = grade_submission(request);
    REQUIRE(report.lessons.size() == 1);
    CHECK(find_case(report, "division: only on the pcie-4 machine").status == CaseStatus::Skipped);
    CHECK(report.lessons[0].max_score == doctest::Approx(80));
    CHECK(report.exit_code() == 0);
}

TEST_CASE("a wrong result loses that case's share, with expected and observed values") {
    GradeReport report = grade("wrong_sum");
    const CaseResult& sum = find_case(report, "sums: sum_up_to of 100");
    CHECK(sum.status == CaseStatus::Failed);
    REQUIRE(sum.findings.size() == 1);
    CHECK(sum.findings[0].expected == "5050");
    CHECK(sum.findings[0].observed == "4950");
    CHECK(report.lessons[0].criteria[0].earned == doctest::Approx(40));
    CHECK(report.lessons[0].criteria[1].earned == doctest::Approx(30));
    CHECK(report.exit_code() == 1);
}

TEST_CASE("a crash in one function fails only the cases that call it") {
    GradeReport report = grade("crash");
    const CaseResult& by_zero = find_case(report, "division: by zero gives 0");
    CHECK(by_zero.status == CaseStatus::Crashed);
    CHECK(contains(by_zero.reason, "segmentation fault"));
    // Named before the crash, the scenario reaches the report although the case never ended.
    CHECK(by_zero.scenario == "pcie-4, lazy");
    CHECK(contains(terminal_report(report, false, false), "[pcie-4, lazy]"));
    CHECK(count_status(report, CaseStatus::Passed) == 5);
    CHECK(report.exit_code() == 1);
}

TEST_CASE("an endless loop is stopped by the CPU-time limit") {
    GradeReport report = grade("hang");
    const CaseResult& negative = find_case(report, "sums: sum_up_to of a negative number");
    CHECK(negative.status == CaseStatus::TimedOut);
    CHECK(contains(negative.reason, "3.0 s of CPU time"));
    CHECK(contains(negative.reason, "endless loop"));
    CHECK(negative.cpu_seconds >= 3);
    CHECK(count_status(report, CaseStatus::Passed) == 5);
    CHECK(report.exit_code() == 1);
}

TEST_CASE("a deadlock is stopped by the blocked-time limit and named as one") {
    GradeReport report = grade("deadlock");
    const CaseResult& negative = find_case(report, "sums: sum_up_to of a negative number");
    CHECK(negative.status == CaseStatus::TimedOut);
    CHECK(contains(negative.reason, "no thread of the program ran"));
    CHECK(contains(negative.reason, "deadlock"));
    CHECK(negative.cpu_seconds < 1);
    CHECK(count_status(report, CaseStatus::Passed) == 5);
    CHECK(report.exit_code() == 1);
}

TEST_CASE("a case the wall-clock backstop ends is run again, and never counted against the student") {
    // No blocked-time limit and a 1 s backstop: the correct but sleeping case stands in for one
    // that a busy machine starved. It is run again alone, ends the same way, and stays without a verdict.
    GradeRequest request = fixture_request("sleeps");
    request.case_blocked_seconds = 0;
    request.case_wall_seconds = 1;
    GradeReport report = grade_submission(request);
    const std::string text = terminal_report(report, false, false);
    INFO(text);
    REQUIRE(report.lessons.size() == 1);
    const CaseResult& negative = find_case(report, "sums: sum_up_to of a negative number");
    CHECK(negative.status == CaseStatus::Unfinished);
    CHECK(contains(negative.reason, "the machine was too busy"));
    CHECK(contains(negative.reason, "no fault of the code under test"));
    CHECK_FALSE(counts_as_failed(negative.status));
    CHECK(negative.max_points == 0);
    CHECK(report.cases_failed() == 0);
    CHECK(report.cases_unfinished() == 1);
    CHECK(report.exit_code() == 4);
    CHECK(contains(text, "Not finished"));
    CHECK(contains(totals_line(report), "1 not finished"));
    CHECK(contains(gradescope_json(report), "[not finished]"));
    CHECK(contains(junit_xml(report), "not finished"));
}

TEST_CASE("exit(0) with a printed fake summary gives no verdict for that case") {
    GradeReport report = grade("exit_midway");
    const CaseResult& add = find_case(report, "sums: add of small numbers");
    CHECK(add.status == CaseStatus::Crashed);
    CHECK(contains(add.reason, "no verdict"));
    CHECK(contains(add.output_tail, "SUCCESS"));
    CHECK(count_status(report, CaseStatus::Passed) == 5);
    CHECK(report.exit_code() == 1);
}

TEST_CASE("what the code prints is fenced in the report, so a printed fake score cannot pass for the grader's") {
    GradeReport report = grade("fake_score");
    const CaseResult& add = find_case(report, "sums: add of small numbers");
    CHECK(add.status == CaseStatus::Crashed);
    REQUIRE(contains(add.output_tail, "Score 100 / 100"));
    const std::string text = terminal_report(report, false, false);
    INFO(text);
    std::istringstream lines(text);
    std::string line, last_score;
    bool fenced = false;
    while (std::getline(lines, line)) {
        if (line.find("+----") != std::string::npos) fenced = true;
        if (line.find("Score 100 / 100") != std::string::npos || line.find("42 passed") != std::string::npos)
            CHECK(line.rfind("        | ", 0) == 0);
        if (line.rfind("Score ", 0) == 0) last_score = line;
    }
    CHECK(fenced);
    CHECK(last_score.rfind("Score 100 / 100", 0) != 0);
    CHECK(report.exit_code() == 1);
}

TEST_CASE("an exception from the code under test fails the case and is shown") {
    GradeReport report = grade("throws");
    const CaseResult& by_zero = find_case(report, "division: by zero gives 0");
    CHECK(by_zero.status == CaseStatus::Failed);
    bool shown = false;
    for (const auto& finding : by_zero.findings) shown = shown || contains(finding.observed, "division by zero");
    CHECK(shown);
}

TEST_CASE("memory and output limits stop a case, not the grading") {
    GradeReport hog = grade("memory_hog");
    CHECK(find_case(hog, "sums: sum_up_to of 100").status == CaseStatus::MemoryExceeded);
    CHECK(contains(find_case(hog, "sums: sum_up_to of 100").reason, "256 MiB"));
    GradeReport flood = grade("output_flood");
    CHECK(find_case(flood, "sums: add of small numbers").status == CaseStatus::OutputExceeded);
    CHECK(flood.lessons[0].criteria[1].earned == doctest::Approx(30));
}

TEST_CASE("a process left behind does not hold up grading and does not survive it") {
    GradeReport report = grade("escapes");
    CHECK(find_case(report, "sums: sum_up_to of 100").status == CaseStatus::Passed);
    if (report.sandbox.rfind("process group", 0) != 0) CHECK_FALSE(process_remains("sum_up_to of 100"));
}

TEST_CASE("submissions that cannot be built score 0 with the reason and exit code 3") {
    struct Expectation {
        const char* submission;
        const char* kind;
        const char* words;
    };
    const Expectation expectations[] = {
        {"compile_error", "compile error", "90-fixture/arith.cpp:3:"},
        {"global_exit", "forbidden symbol", "before main"},
        {"constructor_attribute", "forbidden symbol", "constructor"},
        {"missing_function", "missing function", "does not define `divide(int, int)`"},
        {"wrong_signature", "wrong signature", "divide(long, int)"},
        {"defines_main", "forbidden symbol", "defines main"},
        {"replaces_library", "forbidden symbol", "`fwrite`"},
    };
    for (const auto& expected : expectations) {
        CAPTURE(expected.submission);
        GradeReport report = grade(expected.submission);
        const LessonResult& lesson = report.lessons[0];
        CHECK(lesson.outcome == LessonOutcome::NotBuilt);
        CHECK(lesson.problem_kind == expected.kind);
        CHECK(contains(lesson.problem, expected.words));
        CHECK(lesson.score == 0);
        CHECK(lesson.max_score == doctest::Approx(100));
        CHECK(report.exit_code() == 3);
        CHECK(contains(terminal_report(report, false, false), expected.words));
    }
}

TEST_CASE("a missing file is named with the path the student should use") {
    fs::path empty = fs::path(MGPU_CHECKER_TEST_CACHE) / "empty-submission";
    fs::create_directories(empty / "90-fixture");
    GradeRequest request = fixture_request("good");
    request.submission_dir = empty.string();
    GradeReport report = grade_submission(request);
    REQUIRE(report.lessons.size() == 1);
    CHECK(report.lessons[0].problem_kind == "missing file");
    CHECK(contains(report.lessons[0].problem, "empty-submission/90-fixture/arith.cpp"));
    CHECK(report.exit_code() == 3);
}

// A link would let a submission hand in any file the judge can read as its own: the kit's hidden
// solution, another checkout, /etc/passwd. Each is refused, never followed, and nothing of what it
// names reaches the report.
TEST_CASE("a submission file, lesson folder or class folder that is a symbolic link is refused, not followed") {
    const fs::path root = fs::path(MGPU_CHECKER_TEST_CACHE) / "linked-submissions";
    fs::remove_all(root);
    const fs::path good = fs::absolute(fs::path(MGPU_FIXTURE_SUBMISSIONS) / "good" / "90-fixture" / "arith.cpp");
    fs::create_directories(root / "file" / "90-fixture");
    fs::create_symlink(good, root / "file" / "90-fixture" / "arith.cpp");
    fs::create_directories(root / "passwd" / "90-fixture");
    fs::create_symlink("/etc/passwd", root / "passwd" / "90-fixture" / "arith.cpp");
    fs::create_directories(root / "folder");
    fs::create_directories(root / "real" / "90-fixture");
    fs::copy_file(good, root / "real" / "90-fixture" / "arith.cpp");
    fs::create_directory_symlink(root / "real" / "90-fixture", root / "folder" / "90-fixture");
    fs::create_directory_symlink(root / "real", root / "student");

    struct Linked {
        const char* folder;
        const char* named;   // the path the message names
        bool refuse_linked_folder;
    };
    for (const Linked& linked : {Linked{"file", "file/90-fixture/arith.cpp", false},
                                 Linked{"passwd", "passwd/90-fixture/arith.cpp", false},
                                 Linked{"folder", "folder/90-fixture", false}, Linked{"student", "student", true}}) {
        CAPTURE(linked.folder);
        GradeRequest request = fixture_request("good");
        request.submission_dir = (root / linked.folder).string();
        request.refuse_linked_folder = linked.refuse_linked_folder;
        GradeReport report = grade_submission(request);
        const std::string text = terminal_report(report, false, false);
        INFO(text);
        REQUIRE(report.lessons.size() == 1);
        CHECK(report.lessons[0].outcome == LessonOutcome::NotBuilt);
        CHECK(report.lessons[0].problem_kind == "symbolic link");
        CHECK(contains(report.lessons[0].problem, linked.named));
        CHECK(report.lessons[0].score == 0);
        CHECK(report.exit_code() == 3);
        CHECK_FALSE(contains(text, "root:"));
    }
    // The same folder as a copy is graded, and a folder the user names through a link is too: only a
    // class's student folders must be folders of their own.
    GradeRequest request = fixture_request("good");
    request.submission_dir = (root / "real").string();
    CHECK(grade_submission(request).exit_code() == 0);
    request.submission_dir = (root / "student").string();
    CHECK(grade_submission(request).exit_code() == 0);
}

TEST_CASE("a broken kit is exit code 4 with a message, never a crash") {
    GradeRequest request = fixture_request("good");
    request.lessons_dir = "/nonexistent/lessons";
    GradeReport report = grade_submission(request);
    CHECK(report.exit_code() == 4);
    CHECK(contains(report.kit_fault, "/nonexistent/lessons"));
    request = fixture_request("good");
    request.lesson = 7;
    CHECK(contains(grade_submission(request).kit_fault, "no checker for lesson 7"));
}

TEST_CASE("run_grade_command writes results.json and JUnit XML") {
    GradeRequest request = fixture_request("wrong_sum");
    request.quiet = true;
    request.json_out = std::string(MGPU_CHECKER_TEST_CACHE) + "/results.json";
    request.junit_out = std::string(MGPU_CHECKER_TEST_CACHE) + "/junit.xml";
    CHECK(run_grade_command(request) == 1);
    std::ifstream json_file(request.json_out);
    auto document = nlohmann::json::parse(json_file);
    CHECK(document["score"].get<double>() == doctest::Approx(70));
    CHECK(document["max_score"].get<double>() == doctest::Approx(90));
    std::ifstream xml_file(request.junit_out);
    std::string xml((std::istreambuf_iterator<char>(xml_file)), std::istreambuf_iterator<char>());
    CHECK(contains(xml, "failures=\"1\""));
    CHECK(contains(xml, "skipped=\"1\""));
}
