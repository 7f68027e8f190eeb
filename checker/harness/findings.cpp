// The suite-facing half of the harness: findings, scenarios, skips and the run's settings.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <regex>
#include <stdexcept>

#include "mgpu/check/harness.h"
#include "result_channel.h"

namespace mgpu::check {

namespace {

bool is_students_file(const std::string& path) {
    const auto& sources = student_sources();
    if (sources.count(path) == 1) return true;
    for (const auto& [name, text] : sources)
        if (path.size() > name.size() && path.compare(path.size() - name.size(), name.size(), name) == 0 &&
            path[path.size() - name.size() - 1] == '/')
            return true;
    return false;
}

// A place in the kit's own sources (the suite, the simulator) that a message names, "file:line"
// with a checker/ or tools/ folder in its path. Where the suite or the simulator made a call
// itself (set-up before the student's code runs), the student has no such file to open.
const std::regex& kit_place() {
    static const std::regex place(R"(( at )?((?:[^\s()'":,;]*/)?(?:checker|tools)/[^\s()'":,;]+):([0-9]+))");
    return place;
}

std::string in_students_terms(const std::string& text) {
    std::string out;
    std::size_t copied = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kit_place()); it != std::sregex_iterator(); ++it) {
        const std::smatch& found = *it;
        if (is_students_file(found[2].str())) continue;
        out += text.substr(copied, static_cast<std::size_t>(found.position()) - copied);
        out += found[1].matched ? " in the grader's set-up of this case" : "the grader's set-up of this case";
        copied = static_cast<std::size_t>(found.position() + found.length());
    }
    return out + text.substr(copied);
}

// Every finding points into the student's file or names the grader's set-up as such (the judge
// shows `file` as the place to look): no path into the kit reaches the student.
Finding in_students_terms(Finding finding) {
    finding.check = in_students_terms(finding.check);
    finding.expected = in_students_terms(finding.expected);
    finding.observed = in_students_terms(finding.observed);
    if (!finding.file.empty() && !student_sources().empty() && !is_students_file(finding.file)) {
        finding.file.clear();
        finding.line = 0;
    }
    return finding;
}

std::string describe(const Finding& finding) {
    std::string text = finding.check + ": expected " + finding.expected + ", observed " + finding.observed;
    if (!finding.file.empty()) text += " (call at " + finding.file + ":" + std::to_string(finding.line) + ")";
    const std::string& scenario = detail::current_case().scenario;
    if (!scenario.empty()) text += " [" + scenario + "]";
    return text;
}

}  // namespace

void fail(const Finding& reported) {
    const Finding finding = in_students_terms(reported);
    detail::current_case().pending_finding = finding;
    DOCTEST_FAIL_CHECK(describe(finding));
    detail::current_case().pending_finding.reset();
}

void fail_and_stop(const Finding& reported) {
    const Finding finding = in_students_terms(reported);
    detail::current_case().pending_finding = finding;
    DOCTEST_FAIL(describe(finding));
    // DOCTEST_FAIL throws; this point is reached only if doctest was told not to throw.
    throw std::runtime_error("case stopped after a failed check");
}

void fail_and_end_process(const Finding& reported) {
    const Finding finding = in_students_terms(reported);
    detail::CaseState& state = detail::current_case();
    nlohmann::json record{{"event", "finding"},
                          {"case", state.name},
                          {"check", finding.check},
                          {"expected", finding.expected},
                          {"observed", finding.observed},
                          {"file", finding.file},
                          {"line", finding.line},
                          {"symptom", finding.symptom},
                          {"section", finding.section},
                          {"scenario", state.scenario},
                          {"suite_file", ""},
                          {"suite_line", 0}};
    detail::send(record);
    detail::send(nlohmann::json{{"event", "case-end"},
                                {"name", state.name},
                                {"passed", false},
                                {"failed_checks", 1},
                                {"skipped", false},
                                {"skip_reason", ""},
                                {"scenario", state.scenario},
                                {"seconds", 0.0}});
    detail::send(nlohmann::json{{"event", "exit"}, {"status", 1}});
    if (!detail::judge_attached()) std::fprintf(stderr, "%s\n", describe(finding).c_str());
    std::fflush(nullptr);
    ::_exit(1);
}

void attach_timeline(const std::string& html) { detail::send(nlohmann::json{{"event", "timeline"}, {"html", html}}); }

// Sent at once as well: a case that then crashes or is stopped never reaches its end record, and
// its report still names the machine and schedule it ran on.
void set_scenario(const std::string& description) {
    detail::current_case().scenario = description;
    ++detail::current_case().scenarios;
    detail::send(nlohmann::json{{"event", "scenario"}, {"text", description}});
}

void step(const std::string& what) { detail::send(nlohmann::json{{"event", "step"}, {"text", what}}); }

void skip(const std::string& reason) { detail::current_case().skip_reason = reason; }

bool skipped() { return detail::current_case().skip_reason.has_value(); }

std::uint64_t run_seed() { return detail::settings().seed; }

const std::string& requested_topology() { return detail::settings().topology; }

bool skip_unless_topology(const std::string& topology) {
    const std::string& wanted = requested_topology();
    if (wanted.empty() || wanted == topology) return false;
    skip("this run is restricted to the " + wanted + " machine; the case needs " + topology);
    return true;
}

}  // namespace mgpu::check
