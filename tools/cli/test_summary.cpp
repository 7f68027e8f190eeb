#include "test_summary.h"

#include <csignal>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>

namespace mgpu::cli {

std::optional<DoctestCounts> doctest_counts(const std::string& output) {
    static const std::regex summary(
        R"(\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+)\s*passed\s*\|\s*(\d+)\s*failed\s*\|\s*(\d+)\s*skipped)");
    std::optional<DoctestCounts> counts;
    for (auto it = std::sregex_iterator(output.begin(), output.end(), summary); it != std::sregex_iterator(); ++it) {
        if (!counts) counts.emplace();
        counts->passed += std::stoi((*it)[2]);
        counts->failed += std::stoi((*it)[3]);
        counts->skipped += std::stoi((*it)[4]);
    }
    return counts;
}

std::vector<TestRecord> read_testlog(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file.string());
    std::vector<TestRecord> records;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto entry = nlohmann::json::parse(line);
        TestRecord record;
        record.name = entry.value("name", "");
        record.result = entry.value("result", "");
        record.returncode = entry.value("returncode", 0);
        record.output = entry.value("stdout", "");
        if (entry.contains("stderr") && entry["stderr"].is_string()) record.output += entry["stderr"].get<std::string>();
        records.push_back(std::move(record));
    }
    return records;
}

namespace {

std::string what_went_wrong(const TestRecord& record, const std::optional<DoctestCounts>& counts) {
    if (record.result == "TIMEOUT") return "timed out";
    if (record.result == "ERROR") return "could not be run";
    if (record.result == "UNEXPECTEDPASS") return "passed but was expected to fail";
    if (record.returncode < 0) {
        const char* name = strsignal(-record.returncode);
        return "crashed with signal " + std::to_string(-record.returncode) + " (" + (name ? name : "?") + ")";
    }
    if (counts && counts->failed > 0)
        return std::to_string(counts->failed) + " test case(s) failed";
    return "exited with code " + std::to_string(record.returncode) + " without a failed test case";
}

}  // namespace

SuiteTally tally(const std::vector<TestRecord>& records) {
    SuiteTally result;
    for (const auto& record : records) {
        if (record.result == "SKIP") {
            ++result.skipped;
            continue;
        }
        auto counts = doctest_counts(record.output);
        const bool program_ok = record.result == "OK" || record.result == "EXPECTEDFAIL";
        // doctest's own "skipped" counts the cases a filter left out (suites split over several
        // tests run a part each), so only whole programs that asked to be skipped count here.
        if (counts) result.passed += counts->passed;
        if (program_ok) {
            if (counts) result.failed += counts->failed;
            else ++result.passed;  // not a doctest program: it counts as one test that passed
            continue;
        }
        // A program that failed with failed test cases has reported them itself; any other
        // failure (a crash, a timeout, a nonzero exit after all passed) is one more failure.
        const bool reported_its_failures = counts && counts->failed > 0 && record.result == "FAIL" &&
                                           record.returncode > 0;
        result.failed += (counts ? counts->failed : 0) + (reported_its_failures ? 0 : 1);
        result.problems.push_back(record.name + ": " + what_went_wrong(record, counts));
    }
    return result;
}

}  // namespace mgpu::cli
