// The suite-facing half of the harness: findings, scenarios, skips and the run's settings.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "mgpu/check/harness.h"
#include "result_channel.h"

namespace mgpu::check {

namespace {

std::string describe(const Finding& finding) {
    std::string text = finding.check + ": expected " + finding.expected + ", observed " + finding.observed;
    if (!finding.file.empty()) text += " (call at " + finding.file + ":" + std::to_string(finding.line) + ")";
    const std::string& scenario = detail::current_case().scenario;
    if (!scenario.empty()) text += " [" + scenario + "]";
    return text;
}

}  // namespace

void fail(const Finding& finding) {
    detail::current_case().pending_finding = finding;
    DOCTEST_FAIL_CHECK(describe(finding));
    detail::current_case().pending_finding.reset();
}

void fail_and_stop(const Finding& finding) {
    detail::current_case().pending_finding = finding;
    DOCTEST_FAIL(describe(finding));
    // DOCTEST_FAIL throws; this point is reached only if doctest was told not to throw.
    throw std::runtime_error("case stopped after a failed check");
}

void fail_and_end_process(const Finding& finding) {
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
