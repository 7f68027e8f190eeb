#include <doctest/doctest.h>

#include <string>

#include "conformance_report.h"

using mgpu::validate::CaseComparison;
using mgpu::validate::Comparison;
using mgpu::validate::format_markdown;
using mgpu::validate::format_text;
using mgpu::validate::Outcome;
using mgpu::validate::summary_line;

namespace {

Comparison example() {
    Comparison comparison;
    comparison.compared = 41;
    comparison.real_cases_run = 41;
    comparison.differing.push_back(CaseComparison{"errors", "cudaSetDevice(invalid) returns 101", Outcome::Passed,
                                                  Outcome::Failed, {"real GPU: errors_test.cpp:104: CHECK( a | b ) is NOT correct!"}});
    comparison.skipped.push_back(CaseComparison{"faults", "fault malloc_fails_at = 3", Outcome::Passed, Outcome::Skipped,
                                                {"injected faults exist in the simulator only"}});
    comparison.skipped.push_back(CaseComparison{"no-driver", "no driver: cudaGetDeviceCount returns 35", Outcome::Passed,
                                                Outcome::Skipped, {"needs a machine without a GPU driver"}});
    return comparison;
}

}  // namespace

TEST_CASE("the summary line has the agreed form, with the counts of the comparison") {
    CHECK(summary_line(example()) == "conformance: 41 cases compared, 1 differ, 2 skipped on the real machine");
    CHECK(summary_line(Comparison{}) == "conformance: 0 cases compared, 0 differ, 0 skipped on the real machine");
}

TEST_CASE("the text report lists each difference with its failing assertion, each skip with its reason, then the summary") {
    const std::string text = format_text(example(), "real GPU");
    CHECK(text.find("cudaSetDevice(invalid) returns 101") != std::string::npos);
    CHECK(text.find("real GPU: errors_test.cpp:104: CHECK( a | b ) is NOT correct!") != std::string::npos);
    CHECK(text.find("fault malloc_fails_at = 3") != std::string::npos);
    CHECK(text.find("injected faults exist in the simulator only") != std::string::npos);
    CHECK(text.find("needs a machine without a GPU driver") != std::string::npos);
    const std::string last_line = "conformance: 41 cases compared, 1 differ, 2 skipped on the real machine\n";
    REQUIRE(text.size() > last_line.size());
    CHECK(text.substr(text.size() - last_line.size()) == last_line);
    // The difference comes before the skips.
    CHECK(text.find("cudaSetDevice(invalid)") < text.find("fault malloc_fails_at"));
}

TEST_CASE("the text report says so when nothing differs") {
    Comparison same;
    same.compared = 3;
    const std::string text = format_text(same, "real GPU");
    CHECK(text.find("No test case differs between the simulator and the real GPU.") != std::string::npos);
    CHECK(text.find("Skipped") == std::string::npos);
}

TEST_CASE("the markdown section has a heading, tables whose cells escape '|', and the summary line") {
    const std::string markdown = format_markdown(example(), "real GPU");
    CHECK(markdown.rfind("## Conformance: the simulator against the real GPU\n", 0) == 0);
    CHECK(markdown.find("| Program | Test case | Simulator | real GPU | What failed |") != std::string::npos);
    CHECK(markdown.find("| errors | cudaSetDevice(invalid) returns 101 | passed | failed | real GPU: errors_test.cpp:104: "
                        "CHECK( a \\| b ) is NOT correct! |") != std::string::npos);
    CHECK(markdown.find("| faults | fault malloc_fails_at = 3 | injected faults exist in the simulator only |") !=
          std::string::npos);
    CHECK(markdown.find("conformance: 41 cases compared, 1 differ, 2 skipped on the real machine") != std::string::npos);
}
