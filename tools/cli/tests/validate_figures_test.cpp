#include <doctest/doctest.h>

#include "validate_p2p_figures.h"
#include "validate_report.h"

using namespace mgpu::cli;

TEST_CASE("the p2p matrix's lines are read back figure by figure") {
    const std::string output =
        "p2p devices count=2\n"
        "p2p access src=0 dst=1 can=1\n"
        "p2p access src=1 dst=0 can=0\n"
        "p2p uni src=0 dst=1 p2p=1 bytes=67108864 ms=0.180000\n"
        "p2p lat src=1 dst=0 p2p=0 bytes=4 ms=0.012500\n"
        "p2p note something for people\n"
        "p2p solution-copy src=0 dst=1 p2p=1 bytes=1000 ms=2.0\n"
        "p2p memcpy-peer-async src=0 dst=1 p2p=1 bytes=1000 ms=1.9\n"
        "p2p-done\n";
    const P2pRun run = parse_p2p_output(output);
    CHECK(run.finished);
    CHECK(run.devices == 2);
    CHECK(run.access.at({0, 1}));
    CHECK_FALSE(run.access.at({1, 0}));
    REQUIRE(run.figures.size() == 4);
    const P2pFigure* uni = find_figure(run, "uni", 0, 1, 1);
    REQUIRE(uni != nullptr);
    CHECK(uni->bytes == 67108864u);
    CHECK(find_figure(run, "uni", 0, 1, 0) == nullptr);
    // 64 MiB in 0.18 ms: 67108864 B / 0.00018 s = 372.8e9 B/s.
    CHECK(shown_value(*uni) == doctest::Approx(372.827).epsilon(1e-4));
    // 0.0125 ms = 12.5 us.
    CHECK(shown_value(*find_figure(run, "lat", 1, 0, 0)) == doctest::Approx(12.5));
    REQUIRE(run.notes.size() == 1);
    CHECK(run.notes[0] == "something for people");
    // The runtime's copy took 1.9 ms, the solution's 2.0 ms: the solution runs at 95% of its speed.
    REQUIRE(solution_copy_ratio(run).has_value());
    CHECK(*solution_copy_ratio(run) == doctest::Approx(0.95));
}

TEST_CASE("a run that stopped before p2p-done is not finished") {
    const P2pRun run = parse_p2p_output("p2p devices count=1\np2p uni src=0 dst=0 p2p=0 bytes=4 ms=1\n");
    CHECK_FALSE(run.finished);
    CHECK_FALSE(solution_copy_ratio(run).has_value());
}

TEST_CASE("model over real ratios: in GB/s for bandwidth, so a faster model is above 1") {
    const P2pFigure real{"uni", 0, 1, 1, 1000000000, 4.0};   // 250 GB/s
    const P2pFigure model{"uni", 0, 1, 1, 1000000000, 2.0};  // 500 GB/s
    CHECK(model_ratio(real, model) == doctest::Approx(2.0));
    CHECK_FALSE(ratio_agrees(2.0));
    CHECK(ratio_agrees(0.8));
    CHECK(ratio_agrees(1.25));
    CHECK_FALSE(ratio_agrees(0.79));
}

TEST_CASE("the report's verdicts decide the exit code and the summary line") {
    ValidationReport report(false);
    report.section("Part");
    report.verdict(Verdict::Agrees, "one", "fine");
    report.verdict(Verdict::NotTestable, "two", "needs 2 or more GPUs");
    CHECK(report.exit_code() == 0);
    CHECK(report.summary_line("m") == "validate: PASS - 1 agree, 0 differ or miss a target, 1 not testable here, 0 not built (m)");
    report.verdict(Verdict::Differs, "three", "off");
    CHECK(report.exit_code() == 1);
    CHECK(report.summary_line("m").rfind("validate: FAIL - 1 agree, 1 differ", 0) == 0);
    CHECK(report.markdown().find("## Part") != std::string::npos);
    CHECK(report.markdown().find("- **NOT TESTABLE HERE** two: needs 2 or more GPUs") != std::string::npos);
}

TEST_CASE("tables escape the pipes markdown would read as cell borders") {
    Table table{{"a", "b"}, {{"x|y", "z"}}};
    CHECK(table.markdown() == "| a | b |\n|---|---|\n| x\\|y | z |\n");
    CHECK(table.terminal() == "  a    b\n  x|y  z\n");
}
