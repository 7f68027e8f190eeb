// The reports here are written by hand in the form doctest's XML reporter uses (doctest 2.4:
// <doctest>, <TestSuite>, <TestCase>, <SubCase>, <Expression>, <Exception>, <Message>,
// <OverallResultsAsserts>); the expected results follow from what each case contains.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "doctest_results.h"
#include "report_fixtures.h"

using mgpu::validate::Outcome;
using mgpu::validate::read_doctest_report;

namespace {

const mgpu::validate::CaseResult& find_case(const mgpu::validate::ProgramResults& results, const std::string& name) {
    for (const auto& c : results.cases)
        if (c.name == name) return c;
    FAIL("no case named " << name);
    throw;   // not reached: FAIL ends the test
}

}  // namespace

TEST_CASE("a whole report: every case that ran is read, in order, with its outcome") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    CHECK(results.complete);
    CHECK(results.problem.empty());
    REQUIRE(results.cases.size() == 8);   // the ninth case is listed as filtered out: it did not run
    CHECK(results.cases[0].name == "passes");
    CHECK(results.cases[0].outcome == Outcome::Passed);
    CHECK(results.cases[0].assertions == 2);
    CHECK(results.cases[1].name == "a failing check");
    CHECK(results.cases[2].name == "skipped as a whole");
    CHECK(results.cases[7].name == "cudaEventQuery answers \"600\" <busy> & more");
}

TEST_CASE("a failing assertion is described with its place, its expression, its values and its context") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    const auto& failing = find_case(results, "a failing check");
    CHECK(failing.outcome == Outcome::Failed);
    CHECK(failing.assertions == 2);
    REQUIRE(failing.failures.size() == 1);
    CHECK(failing.failures[0] ==
          "device_properties_test.cpp:98: CHECK( count == expected ) is NOT correct! values: 8 == 1 (with preset := \"h200\")");
}

TEST_CASE("a case ended only by the skip marker is skipped with its reason, not failed") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    const auto& skipped = find_case(results, "skipped as a whole");
    CHECK(skipped.outcome == Outcome::Skipped);
    REQUIRE(skipped.skip_reasons.size() == 1);
    CHECK(skipped.skip_reasons[0] == "injected faults exist in the simulator only");
    CHECK(skipped.failures.empty());
}

TEST_CASE("a loop that skipped some presets passes, and keeps the skipped presets as notes") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    const auto& partly = find_case(results, "partly skipped loop");
    CHECK(partly.outcome == Outcome::Passed);
    REQUIRE(partly.partial_skips.size() == 1);
    CHECK(partly.partial_skips[0] == "preset pcie-4: needs 4 GPUs (pcie-4); this machine has 1");
}

TEST_CASE("a loop that skipped every preset and checked nothing is skipped") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    const auto& all_skipped = find_case(results, "loop with every preset skipped");
    CHECK(all_skipped.outcome == Outcome::Skipped);
    CHECK(all_skipped.skip_reasons.size() == 2);
}

TEST_CASE("a failure inside a subcase fails the case; another exception is a failure, not a skip") {
    const auto results = read_doctest_report(validate_fixtures::kMixedReport);
    const auto& with_subcases = find_case(results, "subcases");
    CHECK(with_subcases.outcome == Outcome::Failed);
    REQUIRE(with_subcases.failures.size() == 1);
    CHECK(with_subcases.failures[0] == "peer_access_test.cpp:140: REQUIRE( enabled ) is NOT correct! values: false");
    const auto& threw = find_case(results, "threw");
    CHECK(threw.outcome == Outcome::Failed);
    REQUIRE(threw.failures.size() == 1);
    CHECK(threw.failures[0] == "threw an exception: std::bad_alloc");
}

TEST_CASE("a skip in one subcase beside a failing check in another is a failure") {
    const auto results = read_doctest_report(validate_fixtures::kSkipBesideFailure);
    REQUIRE(results.cases.size() == 1);
    CHECK(results.cases[0].outcome == Outcome::Failed);
}

TEST_CASE("a report cut short: the cases before are kept, the one it stopped in failed, and the report is incomplete") {
    const auto results = read_doctest_report(validate_fixtures::kCutShortReport);
    CHECK_FALSE(results.complete);
    CHECK_FALSE(results.problem.empty());
    REQUIRE(results.cases.size() == 2);
    CHECK(results.cases[0].outcome == Outcome::Passed);
    CHECK(results.cases[1].outcome == Outcome::Failed);
    REQUIRE(results.cases[1].failures.size() == 2);
    CHECK(results.cases[1].failures[0] == "crashed: SIGSEGV - Segmentation violation signal");
    CHECK(results.cases[1].failures[1] == "the program ended inside this test case");
}

TEST_CASE("no report, or something else than a doctest report, gives no cases and says so") {
    const auto empty = read_doctest_report("");
    CHECK_FALSE(empty.complete);
    CHECK(empty.cases.empty());
    CHECK(empty.problem == "it wrote no report");
    const auto other = read_doctest_report("<testsuites><testsuite/></testsuites>");
    CHECK_FALSE(other.complete);
    CHECK(other.problem == "its report is not a doctest XML report");
}

TEST_CASE("a skip thrown inside an assertion's expression, or out of a subcase, is a skip") {
    const auto results = read_doctest_report(validate_fixtures::kSkipsThroughAssertionsAndSubcases);
    REQUIRE(results.cases.size() == 3);
    CHECK(results.cases[0].outcome == Outcome::Skipped);
    CHECK(results.cases[0].skip_reasons ==
          std::vector<std::string>{"the lazy schedule reorders device work in the simulator only (with schedule := lazy)"});
    CHECK(results.cases[0].failures.empty());
    CHECK(results.cases[1].outcome == Outcome::Failed);
    REQUIRE(results.cases[1].failures.size() == 1);
    CHECK(results.cases[1].failures[0] == "schedules_test.cu:122: CHECK( first == second ) is NOT correct! values: false");
    CHECK(results.cases[2].outcome == Outcome::Skipped);
    CHECK(results.cases[2].skip_reasons == std::vector<std::string>{"needs 8 GPUs (hgx-h200-8); this machine has 1"});
}
