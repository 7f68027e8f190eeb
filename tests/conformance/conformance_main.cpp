// The one doctest main shared by every conformance test program.
//
// On real GPUs a test case whose scenario the machine cannot host ends by throwing
// conformance::CaseSkipped (conformance_skip.h), either out of the test case or out of an
// assertion's expression. doctest counts both as failures, so a listener remembers which failed
// cases failed only that way, and the program's exit status counts them as skipped: it fails only
// when some case failed for another reason.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "conformance_skip.h"
#include "probe_hook.h"

namespace {

struct SkipTally {
    std::mutex mutex;
    bool skip_seen = false;          // in the current test case
    bool other_exception = false;    // in the current test case
    int skipped_assertions = 0;      // in the current test case: failed only by a CaseSkipped thrown inside
    int failed_cases = 0;
    std::vector<std::string> skipped;   // "case name: reason"
};

SkipTally& tally() {
    static SkipTally instance;
    return instance;
}

std::string_view view(const doctest::String& text) { return text.c_str(); }

class SkipListener : public doctest::IReporter {
public:
    explicit SkipListener(const doctest::ContextOptions&) {}

    void test_case_start(const doctest::TestCaseData& test_case) override {
        std::lock_guard lock(tally().mutex);
        tally().skip_seen = false;
        tally().other_exception = false;
        tally().skipped_assertions = 0;
        current_name_ = test_case.m_name;
        reason_.clear();
    }

    void test_case_exception(const doctest::TestCaseException& exception) override {
        std::lock_guard lock(tally().mutex);
        if (exception.is_crash) {
            tally().other_exception = true;
        } else if (const auto reason = conformance::skip_reason(view(exception.error_string))) {
            tally().skip_seen = true;
            if (reason_.empty()) reason_ = *reason;
        } else if (!conformance::is_subcase_stand_in(view(exception.error_string))) {
            tally().other_exception = true;
        }
    }

    void log_assert(const doctest::AssertData& assertion) override {
        if (!assertion.m_failed || !assertion.m_threw) return;
        const auto reason = conformance::skip_reason(view(assertion.m_exception));
        if (!reason) return;
        std::lock_guard lock(tally().mutex);
        tally().skip_seen = true;
        ++tally().skipped_assertions;
        if (reason_.empty()) reason_ = *reason;
    }

    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        std::lock_guard lock(tally().mutex);
        if (stats.testCaseSuccess) return;
        ++tally().failed_cases;
        const int allowed = doctest::TestCaseFailureReason::Exception | doctest::TestCaseFailureReason::AssertFailure;
        const bool only_skipped = (stats.failure_flags & ~allowed) == 0 &&
                                  conformance::failed_only_by_skips(tally().skip_seen, tally().other_exception,
                                                                    stats.numAssertsFailedCurrentTest,
                                                                    tally().skipped_assertions);
        if (only_skipped) tally().skipped.push_back(current_name_ + ": " + reason_);
    }

    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}

private:
    std::string current_name_;
    std::string reason_;
};

}  // namespace

DOCTEST_REGISTER_LISTENER("conformance-skips", 1, SkipListener);

int main(int argc, char** argv) {
    if (argc == 3 && std::string_view(argv[1]) == conformance::kProbeArgument) {
        const auto found = conformance::probe_answers().find(argv[2]);
        if (found == conformance::probe_answers().end()) {
            std::fprintf(stderr, "this program has no probe named %s\n", argv[2]);
            return 2;
        }
        return found->second();
    }
    doctest::Context context(argc, argv);
    const int result = context.run();
    if (context.shouldExit()) return result;
    const SkipTally& counts = tally();
    if (counts.skipped.empty()) return result;
    // stderr: stdout may be carrying a reporter's XML.
    std::fprintf(stderr, "\n%zu test case%s above %s skipped, not failed: this machine cannot host their scenario.\n",
                 counts.skipped.size(), counts.skipped.size() == 1 ? "" : "s",
                 counts.skipped.size() == 1 ? "was" : "were");
    for (const auto& line : counts.skipped) std::fprintf(stderr, "  skipped: %s\n", line.c_str());
    const int other_failures = counts.failed_cases - static_cast<int>(counts.skipped.size());
    return other_failures > 0 ? result : 0;
}
