// JUnit XML as CodeGrade, GitLab and most CI read it: a testsuite per lesson, a testcase per
// check; failed checks are <failure>, crashes and timeouts <error>, skipped ones <skipped>; a
// submission that could not be built is one <error> testcase named "build".
#include <cstdio>
#include <sstream>

#include "reports.h"

namespace mgpu::judge {

namespace {

std::string xml_escape(const std::string& raw) {
    const std::string text = printable(raw);
    std::string escaped;
    for (char c : text) {
        switch (c) {
            case '&': escaped += "&amp;"; break;
            case '<': escaped += "&lt;"; break;
            case '>': escaped += "&gt;"; break;
            case '"': escaped += "&quot;"; break;
            case '\'': escaped += "&apos;"; break;
            case '\t': escaped += "&#9;"; break;
            default: escaped += c;
        }
    }
    return escaped;
}

std::string junit_seconds(double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", seconds);
    return text;
}

std::string details(const CaseResult& test) {
    std::ostringstream out;
    if (!test.scenario.empty()) out << "scenario: " << test.scenario << "\n";
    if (!test.reason.empty()) out << test.reason << "\n";
    for (const auto& finding : test.findings) {
        out << finding.check << "\n  expected: " << finding.expected << "\n  observed: " << finding.observed << "\n";
        if (!finding.file.empty()) out << "  at: " << finding.file << ":" << finding.line << "\n";
    }
    if (!test.output_tail.empty()) out << "last output:\n" << test.output_tail << "\n";
    return out.str();
}

}  // namespace

std::string junit_xml(const GradeReport& report) {
    std::ostringstream suites;
    int total_tests = 0, total_failures = 0, total_errors = 0, total_skipped = 0;
    for (const auto& lesson : report.lessons) {
        int tests = 0, failures = 0, errors = 0, skipped = 0;
        std::ostringstream cases;
        if (lesson.outcome != LessonOutcome::Graded) {
            tests = 1;
            errors = 1;
            std::string files;
            for (const auto& file : lesson.submission_files) files += (files.empty() ? "" : ", ") + file;
            cases << "    <testcase classname=\"" << xml_escape(lesson.id) << "\" name=\"build: " << xml_escape(files)
                  << "\" time=\"0\">\n"
                  << "      <error type=\"" << xml_escape(lesson.problem_kind) << "\" message=\""
                  << xml_escape(lesson.problem_kind + ": score 0") << "\">" << xml_escape(lesson.problem)
                  << "</error>\n    </testcase>\n";
        }
        for (const auto& test : lesson.cases) {
            ++tests;
            cases << "    <testcase classname=\"" << xml_escape(lesson.id + "." + test.criterion) << "\" name=\""
                  << xml_escape(test.name) << "\" time=\"" << junit_seconds(test.seconds) << "\"";
            if (test.status == CaseStatus::Passed) {
                cases << "/>\n";
                continue;
            }
            cases << ">\n";
            if (test.status == CaseStatus::Skipped) {
                ++skipped;
                cases << "      <skipped message=\"" << xml_escape(test.reason) << "\"/>\n";
            } else if (test.status == CaseStatus::Failed) {
                ++failures;
                std::string message = test.findings.empty() ? test.reason : test.findings.front().check;
                cases << "      <failure type=\"failed\" message=\"" << xml_escape(message) << "\">"
                      << xml_escape(details(test)) << "</failure>\n";
            } else {
                ++errors;
                cases << "      <error type=\"" << xml_escape(to_string(test.status)) << "\" message=\""
                      << xml_escape(test.reason) << "\">" << xml_escape(details(test)) << "</error>\n";
            }
            cases << "    </testcase>\n";
        }
        suites << "  <testsuite name=\"" << xml_escape(lesson.id) << "\" tests=\"" << tests << "\" failures=\""
               << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\""
               << junit_seconds(lesson.seconds) << "\">\n"
               << "    <properties>\n"
               << "      <property name=\"score\" value=\"" << format_points(lesson.score) << "\"/>\n"
               << "      <property name=\"max_score\" value=\"" << format_points(lesson.max_score) << "\"/>\n"
               << "      <property name=\"seed\" value=\"" << report.seed << "\"/>\n"
               << "      <property name=\"sandbox\" value=\"" << xml_escape(report.sandbox) << "\"/>\n"
               << "    </properties>\n"
               << cases.str() << "  </testsuite>\n";
        total_tests += tests;
        total_failures += failures;
        total_errors += errors;
        total_skipped += skipped;
    }
    if (!report.kit_fault.empty()) {
        ++total_tests;
        ++total_errors;
        suites << "  <testsuite name=\"checker\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0\">\n"
               << "    <testcase classname=\"checker\" name=\"start\" time=\"0\">\n"
               << "      <error type=\"internal error\" message=\"" << xml_escape(report.kit_fault) << "\"/>\n"
               << "    </testcase>\n  </testsuite>\n";
    }
    std::ostringstream document;
    document << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             << "<testsuites name=\"mgpu checker\" tests=\"" << total_tests << "\" failures=\"" << total_failures
             << "\" errors=\"" << total_errors << "\" skipped=\"" << total_skipped << "\" time=\""
             << junit_seconds(report.seconds) << "\">\n"
             << suites.str() << "</testsuites>\n";
    return document.str();
}

}  // namespace mgpu::judge
