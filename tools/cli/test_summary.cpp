#include "test_summary.h"

#include <csignal>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "translate.h"

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
    if (!in) throw std::runtime_error(fill(tr("cannot read {}"), file.string()));
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
    if (record.result == "TIMEOUT") return tr("timed out");
    if (record.result == "ERROR") return tr("could not be run");
    if (record.result == "UNEXPECTEDPASS") return tr("passed but was expected to fail");
    if (record.returncode < 0) {
        const char* name = strsignal(-record.returncode);
        return fill(tr("crashed with signal {0} ({1})"), -record.returncode, name ? name : "?");
    }
    if (counts && counts->failed > 0) return fill_count(static_cast<std::size_t>(counts->failed), N_("{} test case failed"), N_("{} test cases failed"));
    return fill(tr("exited with code {} without a failed test case"), record.returncode);
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

std::string tally_report(const SuiteTally& result) {
    std::ostringstream out;
    if (!result.problems.empty()) {
        out << tr("Test programs that failed (their output is above):") << "\n";
        for (const auto& problem : result.problems) out << "  " << problem << "\n";
    }
    if (result.skipped > 0) out << fill_count(static_cast<std::size_t>(result.skipped),
                                                N_("{} test program skipped itself (exit code 77)"),
                                                N_("{} test programs skipped themselves (exit code 77)")) << "\n";
    if (result.passed + result.failed == 0) out << tr("No test case ran.") << "\n";
    out << result.passed << " passed, " << result.failed << " failed\n";
    return out.str();
}

}  // namespace mgpu::cli
