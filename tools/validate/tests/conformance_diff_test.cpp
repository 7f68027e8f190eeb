#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "conformance_diff.h"

using mgpu::validate::CaseResult;
using mgpu::validate::Comparison;
using mgpu::validate::compare_program;
using mgpu::validate::merge_runs;
using mgpu::validate::Outcome;
using mgpu::validate::SideRun;

namespace {

CaseResult passed(const std::string& name, std::vector<std::string> partial_skips = {}) {
    CaseResult c;
    c.name = name;
    c.outcome = Outcome::Passed;
    c.assertions = 1;
    c.partial_skips = std::move(partial_skips);
    return c;
}

CaseResult failed(const std::string& name, const std::string& failure) {
    CaseResult c;
    c.name = name;
    c.outcome = Outcome::Failed;
    c.failures = {failure};
    return c;
}

CaseResult skipped(const std::string& name, const std::string& reason) {
    CaseResult c;
    c.name = name;
    c.outcome = Outcome::Skipped;
    c.skip_reasons = {reason};
    return c;
}

SideRun run(const std::string& label, std::vector<CaseResult> cases, const std::string& problem = "") {
    SideRun side;
    side.label = label;
    side.results.cases = std::move(cases);
    side.results.complete = problem.empty();
    side.problem = problem;
    return side;
}

}  // namespace

TEST_CASE("cases that pass on both sides are compared and do not differ") {
    Comparison comparison;
    compare_program("errors", {run("", {passed("a"), passed("b")})}, {run("", {passed("a"), passed("b")})}, comparison);
    CHECK(comparison.compared == 2);
    CHECK(comparison.real_cases_run == 2);
    CHECK(comparison.differing.empty());
    CHECK(comparison.skipped.empty());
    CHECK(comparison.program_problems.empty());
}

TEST_CASE("passed on the simulator and failed on the real GPU differs, with the real side's failing assertion") {
    Comparison comparison;
    compare_program("errors", {run("", {passed("a"), passed("b")})},
                    {run("", {passed("a"), failed("b", "errors_test.cpp:104: CHECK( x == 3 ) is NOT correct! values: 0 == 3")})},
                    comparison);
    CHECK(comparison.compared == 2);
    REQUIRE(comparison.differing.size() == 1);
    const auto& row = comparison.differing[0];
    CHECK(row.program == "errors");
    CHECK(row.case_name == "b");
    CHECK(row.simulator == Outcome::Passed);
    CHECK(row.real == Outcome::Failed);
    REQUIRE(row.details.size() == 1);
    CHECK(row.details[0] == "real GPU: errors_test.cpp:104: CHECK( x == 3 ) is NOT correct! values: 0 == 3");
}

TEST_CASE("failed on the simulator and passed on the real GPU differs too, with the simulator's assertion") {
    Comparison comparison;
    compare_program("memory", {run("", {failed("a", "why")})}, {run("", {passed("a")})}, comparison);
    REQUIRE(comparison.differing.size() == 1);
    CHECK(comparison.differing[0].details == std::vector<std::string>{"simulator: why"});
}

TEST_CASE("failed on both sides is the same result: compared, not a difference") {
    Comparison comparison;
    compare_program("memory", {run("", {failed("a", "x")})}, {run("", {failed("a", "y")})}, comparison);
    CHECK(comparison.compared == 1);
    CHECK(comparison.differing.empty());
}

TEST_CASE("a case skipped on the real machine is listed with its reason and not compared") {
    Comparison comparison;
    compare_program("faults", {run("", {passed("a"), passed("b")})},
                    {run("", {skipped("a", "injected faults exist in the simulator only"), passed("b")})}, comparison);
    CHECK(comparison.compared == 1);
    CHECK(comparison.differing.empty());
    REQUIRE(comparison.skipped.size() == 1);
    CHECK(comparison.skipped[0].case_name == "a");
    CHECK(comparison.skipped[0].real == Outcome::Skipped);
    CHECK(comparison.skipped[0].details == std::vector<std::string>{"injected faults exist in the simulator only"});
}

TEST_CASE("a case skipped on the simulator differs, with the simulator's reason, whatever the real side did") {
    Comparison comparison;
    compare_program("faults", {run("", {skipped("a", "no preset fits"), skipped("b", "no preset fits")})},
                    {run("", {passed("a"), skipped("b", "needs 8 GPUs")})}, comparison);
    CHECK(comparison.skipped.empty());
    CHECK(comparison.compared == 2);
    REQUIRE(comparison.differing.size() == 2);
    CHECK(comparison.differing[0].case_name == "a");
    CHECK(comparison.differing[0].simulator == Outcome::Skipped);
    CHECK(comparison.differing[0].details == std::vector<std::string>{"simulator: skipped: no preset fits"});
    CHECK(comparison.differing[1].case_name == "b");
    CHECK(comparison.differing[1].details ==
          std::vector<std::string>{"simulator: skipped: no preset fits", "real GPU: skipped: needs 8 GPUs"});
}

TEST_CASE("a case compared on some presets only is listed with the presets that were skipped") {
    Comparison comparison;
    compare_program("peer-access", {run("", {passed("loop")})}, {run("", {passed("loop", {"preset pcie-4: why"})})},
                    comparison);
    CHECK(comparison.compared == 1);
    REQUIRE(comparison.partly_skipped.size() == 1);
    CHECK(comparison.partly_skipped[0].details == std::vector<std::string>{"preset pcie-4: why"});
}

TEST_CASE("a real program that stopped early: the cases it never reached differ, and the problem is listed") {
    Comparison comparison;
    compare_program("streams", {run("", {passed("a"), passed("b"), passed("c")})},
                    {run("", {passed("a")}, "ended by signal 11 (Segmentation fault)")}, comparison);
    CHECK(comparison.compared == 3);
    CHECK(comparison.real_cases_run == 1);
    REQUIRE(comparison.differing.size() == 2);
    CHECK(comparison.differing[0].case_name == "b");
    CHECK(comparison.differing[0].real == Outcome::NotRun);
    CHECK(comparison.differing[0].details ==
          std::vector<std::string>{"real GPU: did not run: ended by signal 11 (Segmentation fault)"});
    REQUIRE(comparison.program_problems.size() == 1);
    CHECK(comparison.program_problems[0] == "streams on the real GPU: ended by signal 11 (Segmentation fault)");
}

TEST_CASE("a case only the real side ran differs: the simulator did not run it") {
    Comparison comparison;
    compare_program("events", {run("", {passed("a")})}, {run("", {passed("a"), passed("new")})}, comparison);
    REQUIRE(comparison.differing.size() == 1);
    CHECK(comparison.differing[0].case_name == "new");
    CHECK(comparison.differing[0].simulator == Outcome::NotRun);
}

TEST_CASE("several real runs merge: failed in any beats passed, passed beats skipped, skipped in all stays skipped") {
    const std::string as_they_are = "GPUs as they are";
    const std::string one_gpu = "CUDA_VISIBLE_DEVICES=0";
    const auto merged = merge_runs({
        run(as_they_are, {skipped("one-gpu case", "h200 has 1 GPU, shows 8"), passed("eight-gpu case"),
                          skipped("never hosted", "needs a machine without a GPU driver"), passed("flaky")}),
        run(one_gpu, {passed("one-gpu case"), skipped("eight-gpu case", "needs 8 GPUs"),
                      skipped("never hosted", "needs a machine without a GPU driver"), failed("flaky", "broke")}),
    });
    REQUIRE(merged.size() == 4);
    CHECK(merged[0].name == "one-gpu case");
    CHECK(merged[0].outcome == Outcome::Passed);
    CHECK(merged[1].outcome == Outcome::Passed);
    CHECK(merged[2].outcome == Outcome::Skipped);
    CHECK(merged[2].skip_reasons == std::vector<std::string>{"[GPUs as they are] needs a machine without a GPU driver",
                                                             "[CUDA_VISIBLE_DEVICES=0] needs a machine without a GPU driver"});
    CHECK(merged[3].outcome == Outcome::Failed);
    CHECK(merged[3].failures == std::vector<std::string>{"[CUDA_VISIBLE_DEVICES=0] broke"});
}

TEST_CASE("one run: messages are not labelled") {
    const auto merged = merge_runs({run("GPUs as they are", {failed("x", "broke")})});
    REQUIRE(merged.size() == 1);
    CHECK(merged[0].failures == std::vector<std::string>{"broke"});
}
