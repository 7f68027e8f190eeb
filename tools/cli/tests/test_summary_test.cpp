#include <doctest/doctest.h>

#include <fstream>
#include <unistd.h>

#include "test_summary.h"

using namespace mgpu::cli;

TEST_CASE("doctest's summary line is read, with doctest's padding") {
    const std::string output =
        "[doctest] doctest version is \"2.4.9\"\n"
        "===============================================================================\n"
        "[doctest] test cases:  12 |  10 passed | 2 failed | 1 skipped\n"
        "[doctest] assertions: 140 | 138 passed | 2 failed |\n"
        "[doctest] Status: FAILURE!\n";
    auto counts = doctest_counts(output);
    REQUIRE(counts.has_value());
    CHECK(counts->passed == 10);
    CHECK(counts->failed == 2);
    CHECK(counts->skipped == 1);
    CHECK_FALSE(doctest_counts("all good\n").has_value());
}

TEST_CASE("two runs in one output are added up") {
    auto counts = doctest_counts("[doctest] test cases: 3 | 3 passed | 0 failed | 0 skipped\n"
                                 "[doctest] test cases: 4 | 2 passed | 2 failed | 0 skipped\n");
    REQUIRE(counts.has_value());
    CHECK(counts->passed == 5);
    CHECK(counts->failed == 2);
}

TEST_CASE("test programs are tallied by their test cases; a crash or timeout is one failure") {
    const std::string summary_ok = "[doctest] test cases: 7 | 7 passed | 0 failed | 0 skipped\n";
    const std::string summary_bad = "[doctest] test cases: 5 | 3 passed | 2 failed | 0 skipped\n";
    std::vector<TestRecord> records = {
        {"topology", "OK", 0, summary_ok},
        {"runtime", "FAIL", 1, summary_bad},
        {"memory", "FAIL", -11, "[doctest] doctest version is \"2.4.9\"\n"},
        {"kernel", "TIMEOUT", -15, ""},
        {"cuda-only", "SKIP", 77, ""},
        {"script", "OK", 0, "fine\n"},
    };
    SuiteTally result = tally(records);
    CHECK(result.passed == 7 + 3 + 1);
    CHECK(result.failed == 2 + 1 + 1);
    CHECK(result.skipped == 1);
    REQUIRE(result.problems.size() == 3);
    CHECK(result.problems[0].find("runtime: 2 test cases failed") == 0);
    CHECK(result.problems[1].find("memory: crashed with signal 11") == 0);
    CHECK(result.problems[2] == "kernel: timed out");
}

// English counts read as English: one case, one program, never "1 test case(s)".
TEST_CASE("a count of one reads in the singular: 1 test case failed, 1 test program skipped itself") {
    SuiteTally result = tally({{"runtime", "FAIL", 1, "[doctest] test cases: 4 | 3 passed | 1 failed | 0 skipped\n"},
                               {"cuda-only", "SKIP", 77, ""}});
    REQUIRE(result.problems.size() == 1);
    CHECK(result.problems[0] == "runtime: 1 test case failed");
    const std::string text = tally_report(result);
    CHECK(text.find("1 test program skipped itself (exit code 77)") != std::string::npos);
    CHECK(text.find("(s)") == std::string::npos);
}

TEST_CASE("cases a doctest filter left out are not counted as skipped tests") {
    SuiteTally result = tally({{"part-2", "OK", 0, "[doctest] test cases: 3 | 3 passed | 0 failed | 9 skipped\n"}});
    CHECK(result.passed == 3);
    CHECK(result.skipped == 0);
}

TEST_CASE("a program that fails after all its cases passed still counts as a failure") {
    SuiteTally result = tally({{"leaky", "FAIL", 1, "[doctest] test cases: 2 | 2 passed | 0 failed | 0 skipped\n"}});
    CHECK(result.passed == 2);
    CHECK(result.failed == 1);
}

TEST_CASE("meson's testlog.json is read line by line, stdout and stderr together") {
    char path[] = "/tmp/mgpu-testlog-XXXXXX";
    int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::close(fd);
    {
        std::ofstream log(path);
        log << R"({"name": "a", "stdout": "[doctest] test cases: 1 | 1 passed | 0 failed | 0 skipped\n", )"
               R"("result": "OK", "returncode": 0, "stderr": "warning\n"})" << "\n";
        log << R"({"name": "b", "stdout": "", "result": "FAIL", "returncode": -6})" << "\n";
    }
    auto records = read_testlog(path);
    ::unlink(path);
    REQUIRE(records.size() == 2);
    CHECK(records[0].name == "a");
    CHECK(records[0].output.find("warning") != std::string::npos);
    CHECK(records[1].result == "FAIL");
    CHECK(records[1].returncode == -6);
}
