#include "doctest_results.h"

#include <cstdlib>

#include "conformance_skip.h"
#include "mini_xml.h"

namespace mgpu::validate {

namespace {

bool has_skip_marker(const std::string& text) {
    return text.rfind(conformance::kSkipMarker, 0) == 0;
}

std::string without_skip_marker(const std::string& text) {
    return text.substr(std::string(conformance::kSkipMarker).size());
}

// What doctest reports for an exception leaving a subcase; the exception itself follows at the
// level of the test case, so this stand-in says nothing of its own.
bool is_subcase_stand_in(const std::string& text) {
    return text.rfind("exception thrown in subcase - will translate later", 0) == 0;
}

// An exception thrown inside an assertion's expression is written as a quoted string.
std::string unquoted(const std::string& text) {
    if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
    return text;
}

void add_once(std::vector<std::string>& to, const std::string& text) {
    for (const auto& existing : to)
        if (existing == text) return;
    to.push_back(text);
}

// doctest pads the texts it writes with spaces and newlines.
std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

// The file's name without its folders: doctest writes it relative to the build folder, which says
// nothing to a reader, and the suite's file names are unique.
std::string where(const XmlElement& element) {
    std::string file = element.attribute_or("filename", "");
    if (const auto slash = file.find_last_of('/'); slash != std::string::npos) file = file.substr(slash + 1);
    const std::string line = element.attribute_or("line", "");
    if (file.empty()) return "";
    return file + (line.empty() || line == "0" ? "" : ":" + line) + ": ";
}

// Info elements hold what CAPTURE and INFO recorded when an assertion failed.
std::string context_of(const XmlElement& element) {
    std::string context;
    for (const auto& child : element.children)
        if (child.name == "Info") context += (context.empty() ? " (with " : ", ") + trimmed(child.text);
    return context.empty() ? "" : context + ")";
}

std::string describe_failed_expression(const XmlElement& expression) {
    const std::string type = expression.attribute_or("type", "CHECK");
    std::string line = where(expression) + type + "( ";
    if (const auto* original = expression.first_child("Original")) line += trimmed(original->text);
    line += " ) is NOT correct!";
    if (const auto* expanded = expression.first_child("Expanded")) line += " values: " + trimmed(expanded->text);
    if (const auto* exception = expression.first_child("Exception"))
        line += " threw: " + trimmed(exception->text);
    return line + context_of(expression);
}

struct Collected {
    std::vector<std::string> failures;
    std::vector<std::string> whole_case_skips;
    std::vector<std::string> preset_skips;
    int skipped_assertions = 0;   // assertions that failed only because the machine could not be brought up
    bool other_exception = false;
};

// Walks a test case and its subcases.
void collect(const XmlElement& element, Collected& into) {
    for (const auto& child : element.children) {
        if (child.name == "SubCase") {
            collect(child, into);
        } else if (child.name == "Expression") {
            if (child.attribute_or("success", "true") != "false") continue;
            const auto* exception = child.first_child("Exception");
            const std::string thrown = exception ? unquoted(trimmed(exception->text)) : "";
            if (has_skip_marker(thrown)) {
                ++into.skipped_assertions;
                add_once(into.whole_case_skips, without_skip_marker(thrown) + context_of(child));
            } else {
                into.failures.push_back(describe_failed_expression(child));
            }
        } else if (child.name == "Exception") {
            const std::string text = trimmed(child.text);
            const bool crash = child.attribute_or("crash", "false") == "true";
            if (!crash && is_subcase_stand_in(text)) continue;
            if (!crash && has_skip_marker(text)) {
                add_once(into.whole_case_skips, without_skip_marker(text));
            } else {
                into.failures.push_back((crash ? "crashed: " : "threw an exception: ") + text);
                into.other_exception = true;
            }
        } else if (child.name == "Message") {
            const auto* text_element = child.first_child("Text");
            const std::string text = text_element ? trimmed(text_element->text) : "";
            const std::string type = child.attribute_or("type", "");
            if (has_skip_marker(text)) add_once(into.preset_skips, without_skip_marker(text));
            else if (type == "ERROR" || type == "FATAL ERROR") into.failures.push_back(where(child) + type + ": " + text);
        }
    }
}

int number(const XmlElement& element, std::string_view key) {
    return std::atoi(element.attribute_or(key, "0").c_str());
}

CaseResult read_case(const XmlElement& test_case) {
    CaseResult result;
    result.name = test_case.attribute_or("name", "");
    Collected found;
    collect(test_case, found);
    result.failures = found.failures;
    const XmlElement* totals = test_case.first_child("OverallResultsAsserts");
    if (totals == nullptr) {
        result.outcome = Outcome::Failed;
        result.failures.push_back("the program ended inside this test case");
        return result;
    }
    const int failed_assertions = number(*totals, "failures");
    result.assertions = number(*totals, "successes") + failed_assertions;
    const bool success = totals->attribute_or("test_case_success", "false") == "true";
    if (success) {
        if (result.assertions == 0 && !found.preset_skips.empty()) {
            result.outcome = Outcome::Skipped;
            result.skip_reasons = found.preset_skips;
        } else {
            result.outcome = Outcome::Passed;
            result.partial_skips = found.preset_skips;
        }
        return result;
    }
    if (failed_assertions == found.skipped_assertions && !found.other_exception && !found.whole_case_skips.empty()) {
        result.outcome = Outcome::Skipped;
        result.skip_reasons = found.whole_case_skips;
        result.partial_skips = found.preset_skips;
        return result;
    }
    result.outcome = Outcome::Failed;
    result.partial_skips = found.preset_skips;
    if (result.failures.empty()) result.failures.push_back("the test case failed without a failing assertion (a timeout?)");
    return result;
}

void read_cases(const XmlElement& element, ProgramResults& into) {
    for (const auto& child : element.children) {
        if (child.name == "TestCase") {
            // Cases left out by a filter are listed with skipped="true"; they did not run.
            if (child.attribute_or("skipped", "false") != "true") into.cases.push_back(read_case(child));
        } else if (child.name == "TestSuite" || child.name == "doctest") {
            read_cases(child, into);
        }
    }
}

}  // namespace

std::string to_string(Outcome outcome) {
    switch (outcome) {
        case Outcome::Passed: return "passed";
        case Outcome::Failed: return "failed";
        case Outcome::Skipped: return "skipped";
        case Outcome::NotRun: return "did not run";
    }
    return "unknown";
}

ProgramResults read_doctest_report(std::string_view xml) {
    ProgramResults results;
    const XmlDocument document = read_xml(xml);
    const XmlElement* report = document.root.first_child("doctest");
    if (report == nullptr) {
        results.problem = xml.empty() ? "it wrote no report" : "its report is not a doctest XML report";
        return results;
    }
    read_cases(*report, results);
    results.complete = document.complete && report->first_child("OverallResultsTestCases") != nullptr;
    if (!results.complete)
        results.problem = document.complete ? "its report ends before the run's totals" : "its report is cut short (" + document.problem + ")";
    return results;
}

}  // namespace mgpu::validate
