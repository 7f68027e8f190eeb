// The result of each test case of one run of a doctest program, read from its XML report
// (--reporters=xml). A case ended by conformance::CaseSkipped (tests/conformance/conformance_skip.h)
// is Skipped with its reason, not Failed; a case that checked nothing because every preset it
// loops over was skipped is Skipped too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mgpu::validate {

enum class Outcome { Passed, Failed, Skipped, NotRun };

std::string to_string(Outcome outcome);

struct CaseResult {
    std::string name;
    Outcome outcome = Outcome::NotRun;
    std::vector<std::string> failures;       // failing assertions and exceptions, one line each
    std::vector<std::string> skip_reasons;   // why (all of) the case was skipped
    std::vector<std::string> partial_skips;  // presets skipped inside a case that still checked others
    int assertions = 0;                      // assertions evaluated, passed or failed
};

struct ProgramResults {
    std::vector<CaseResult> cases;           // in the order they ran
    bool complete = false;                   // the report was whole: the program ran to its end
    std::string problem;                     // why not complete, in words
};

ProgramResults read_doctest_report(std::string_view xml);

}  // namespace mgpu::validate
