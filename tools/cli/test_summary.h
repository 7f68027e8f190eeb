// Turns meson's test log into test-case counts: doctest programs report how many of their
// cases passed; a program that crashed or timed out counts as one failure under its own name.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mgpu::cli {

struct DoctestCounts {
    int passed = 0;
    int failed = 0;
    int skipped = 0;
};

// Sums every "[doctest] test cases: N | P passed | F failed | S skipped" line in `output`.
std::optional<DoctestCounts> doctest_counts(const std::string& output);

// One entry of meson's testlog.json.
struct TestRecord {
    std::string name;
    std::string result;  // OK, FAIL, SKIP, TIMEOUT, ERROR, EXPECTEDFAIL, UNEXPECTEDPASS
    int returncode = 0;
    std::string output;  // stdout and stderr together
};

// Reads build/meson-logs/testlog.json (one JSON object a line). Throws std::runtime_error.
std::vector<TestRecord> read_testlog(const std::filesystem::path& file);

struct SuiteTally {
    int passed = 0;
    int failed = 0;
    int skipped = 0;  // test programs that exited with 77 (meson's skip)
    std::vector<std::string> problems;  // "name: what went wrong", one per test program that failed
};

SuiteTally tally(const std::vector<TestRecord>& records);

// What `mgpu test` prints after meson's output: the programs that failed, those that skipped
// themselves, and last the line "N passed, N failed", which stays English in every language (CI
// and the README read it).
std::string tally_report(const SuiteTally& result);

}  // namespace mgpu::cli
