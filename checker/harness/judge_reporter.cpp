// The doctest reporter the judge reads: it turns doctest's events into sealed records on
// the result channel. Selected with -r=mgpu-judge by the harness's main when a judge is attached.
#include <doctest/doctest.h>

#include "mgpu/check/host_races.h"
#include "result_channel.h"

namespace mgpu::check::detail {

namespace {

using nlohmann::json;

json finding_record(const Finding& finding, const char* suite_file, int suite_line) {
    return json{{"event", "finding"},
                {"case", current_case().name},
                {"check", finding.check},
                {"expected", finding.expected},
                {"observed", finding.observed},
                {"file", finding.file},
                {"line", finding.line},
                {"symptom", finding.symptom},
                {"section", finding.section},
                {"scenario", current_case().scenario},
                {"suite_file", suite_file ? suite_file : ""},
                {"suite_line", suite_line}};
}

// A plain doctest assertion failed (not one raised through mgpu::check::fail): show what doctest knows.
void send_plain_failure(const std::string& what, const std::string& observed, const char* file, int line) {
    Finding finding;
    finding.check = what;
    finding.expected = "the check to hold";
    finding.observed = observed;
    send(finding_record(finding, file, line));
    ++current_case().findings;
}

struct JudgeReporter : public doctest::IReporter {
    explicit JudgeReporter(const doctest::ContextOptions&) {}

    void report_query(const doctest::QueryData& query) override {
        if (query.data == nullptr) return;
        unsigned listed = 0;
        for (unsigned i = 0; i < query.num_data; ++i) {
            const doctest::TestCaseData* test = query.data[i];
            json listed_case{{"event", "case"}, {"name", test->m_name}, {"file", test->m_file.c_str()},
                             {"line", test->m_line}};
            // Cases of the suite "host races" run in the judge's ThreadSanitizer build (host_races.h).
            if (test->m_test_suite != nullptr && std::string(test->m_test_suite) == mgpu::check::kHostRaceSuite)
                listed_case["race"] = true;
            send(listed_case);
            ++listed;
        }
        send(json{{"event", "list-end"}, {"count", listed}});
    }

    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}

    void test_case_start(const doctest::TestCaseData& test) override {
        begin_case(test.m_name);
        send(json{{"event", "case-start"}, {"name", test.m_name}});
    }

    void test_case_reenter(const doctest::TestCaseData&) override {}

    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        const CaseState& state = current_case();
        json record{{"event", "case-end"},
                    {"name", state.name},
                    {"passed", stats.testCaseSuccess},
                    {"failed_checks", stats.numAssertsFailedCurrentTest},
                    {"skipped", state.skip_reason.has_value()},
                    {"skip_reason", state.skip_reason.value_or("")},
                    {"scenario", state.scenario},
                    {"seconds", stats.seconds}};
        send(record);
    }

    void test_case_exception(const doctest::TestCaseException& exception) override {
        send(json{{"event", "exception"},
                  {"case", current_case().name},
                  {"text", exception.error_string.c_str()},
                  {"crash", exception.is_crash},
                  {"scenario", current_case().scenario}});
    }

    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}

    void log_assert(const doctest::AssertData& assertion) override {
        if (!assertion.m_failed) return;
        std::string observed = assertion.m_threw ? std::string("threw: ") + assertion.m_exception.c_str()
                                                 : std::string(assertion.m_decomp.c_str());
        send_plain_failure(std::string(doctest::assertString(assertion.m_at)) + "( " + assertion.m_expr + " )",
                           observed, assertion.m_file, assertion.m_line);
    }

    void log_message(const doctest::MessageData& message) override {
        const bool is_failure = (message.m_severity & (doctest::assertType::is_check |
                                                        doctest::assertType::is_require)) != 0;
        if (!is_failure) return;
        CaseState& state = current_case();
        if (state.pending_finding) {
            send(finding_record(*state.pending_finding, message.m_file, message.m_line));
            state.pending_finding.reset();
            ++state.findings;
            return;
        }
        send_plain_failure(message.m_string.c_str(), "", message.m_file, message.m_line);
    }

    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

}  // namespace mgpu::check::detail

DOCTEST_REGISTER_REPORTER("mgpu-judge", 0, mgpu::check::detail::JudgeReporter);
