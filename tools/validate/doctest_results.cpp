#include "doctest_results.h"

#include <cstdlib>
#include <optional>

#include <pugixml.hpp>

#include "conformance_skip.h"

namespace mgpu::validate {

namespace {

using XmlElement = pugi::xml_node;

// An attribute's value, or `fallback` when the element does not have it.
std::string attribute_or(const XmlElement& element, const char* key, const char* fallback) {
    return element.attribute(key).as_string(fallback);
}

// The element's own text (doctest writes plain text, no mixed content).
std::string text_of(const XmlElement& element) { return element.child_value(); }

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
    std::string file = attribute_or(element, "filename", "");
    if (const auto slash = file.find_last_of('/'); slash != std::string::npos) file = file.substr(slash + 1);
    const std::string line = attribute_or(element, "line", "");
    if (file.empty()) return "";
    return file + (line.empty() || line == "0" ? "" : ":" + line) + ": ";
}

// Info elements hold what CAPTURE and INFO recorded when an assertion failed.
std::string context_of(const XmlElement& element) {
    std::string context;
    for (const XmlElement& child : element.children())
        if (std::string(child.name()) == "Info") context += (context.empty() ? " (with " : ", ") + trimmed(text_of(child));
    return context.empty() ? "" : context + ")";
}

std::string describe_failed_expression(const XmlElement& expression) {
    const std::string type = attribute_or(expression, "type", "CHECK");
    std::string line = where(expression) + type + "( ";
    if (const XmlElement original = expression.child("Original")) line += trimmed(text_of(original));
    line += " ) is NOT correct!";
    if (const XmlElement expanded = expression.child("Expanded")) line += " values: " + trimmed(text_of(expanded));
    if (const XmlElement exception = expression.child("Exception"))
        line += " threw: " + trimmed(text_of(exception));
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
    for (const XmlElement& child : element.children()) {
        if (std::string(child.name()) == "SubCase") {
            collect(child, into);
        } else if (std::string(child.name()) == "Expression") {
            if (attribute_or(child, "success", "true") != "false") continue;
            const XmlElement exception = child.child("Exception");
            const std::string thrown = exception ? trimmed(text_of(exception)) : "";
            if (const auto reason = conformance::skip_reason(thrown)) {
                ++into.skipped_assertions;
                add_once(into.whole_case_skips, std::string(*reason) + context_of(child));
            } else {
                into.failures.push_back(describe_failed_expression(child));
            }
        } else if (std::string(child.name()) == "Exception") {
            const std::string text = trimmed(text_of(child));
            const bool crash = attribute_or(child, "crash", "false") == "true";
            if (!crash && conformance::is_subcase_stand_in(text)) continue;
            const auto reason = crash ? std::nullopt : conformance::skip_reason(text);
            if (reason) {
                add_once(into.whole_case_skips, std::string(*reason));
            } else {
                into.failures.push_back((crash ? "crashed: " : "threw an exception: ") + text);
                into.other_exception = true;
            }
        } else if (std::string(child.name()) == "Message") {
            const XmlElement text_element = child.child("Text");
            const std::string text = text_element ? trimmed(text_of(text_element)) : "";
            const std::string type = attribute_or(child, "type", "");
            if (const auto reason = conformance::skip_reason(text)) add_once(into.preset_skips, std::string(*reason));
            else if (type == "ERROR" || type == "FATAL ERROR") into.failures.push_back(where(child) + type + ": " + text);
        }
    }
}

int number(const XmlElement& element, const char* key) {
    return std::atoi(attribute_or(element, key, "0").c_str());
}

CaseResult read_case(const XmlElement& test_case) {
    CaseResult result;
    result.name = attribute_or(test_case, "name", "");
    Collected found;
    collect(test_case, found);
    result.failures = found.failures;
    const XmlElement totals = test_case.child("OverallResultsAsserts");
    if (!totals) {
        result.outcome = Outcome::Failed;
        result.failures.push_back("the program ended inside this test case");
        return result;
    }
    const int failed_assertions = number(totals, "failures");
    result.assertions = number(totals, "successes") + failed_assertions;
    const bool success = attribute_or(totals, "test_case_success", "false") == "true";
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
    if (conformance::failed_only_by_skips(!found.whole_case_skips.empty(), found.other_exception, failed_assertions,
                                          found.skipped_assertions)) {
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
    for (const XmlElement& child : element.children()) {
        if (std::string(child.name()) == "TestCase") {
            // Cases left out by a filter are listed with skipped="true"; they did not run.
            if (attribute_or(child, "skipped", "false") != "true") into.cases.push_back(read_case(child));
        } else if (std::string(child.name()) == "TestSuite" || std::string(child.name()) == "doctest") {
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
    // A report cut short (the program crashed or was stopped) fails to parse, but pugixml keeps
    // the part of the tree it read: the cases that finished still count.
    pugi::xml_document document;
    const pugi::xml_parse_result parsed = document.load_buffer(xml.data(), xml.size(), pugi::parse_default,
                                                              pugi::encoding_utf8);
    const XmlElement report = document.child("doctest");
    if (!report) {
        results.problem = xml.empty() ? "it wrote no report" : "its report is not a doctest XML report";
        return results;
    }
    read_cases(report, results);
    results.complete = parsed && report.child("OverallResultsTestCases");
    if (!results.complete)
        results.problem = parsed ? "its report ends before the run's totals"
                                 : std::string("its report is cut short (") + parsed.description() + " at byte " +
                                       std::to_string(parsed.offset) + ")";
    return results;
}

}  // namespace mgpu::validate
