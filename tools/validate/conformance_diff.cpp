#include "conformance_diff.h"

#include <map>

namespace mgpu::validate {

namespace {

// Which of two outcomes of the same case in different runs stands for the side.
int precedence(Outcome outcome) {
    switch (outcome) {
        case Outcome::Failed: return 3;
        case Outcome::Passed: return 2;
        case Outcome::Skipped: return 1;
        case Outcome::NotRun: return 0;
    }
    return 0;
}

std::string labelled(const std::string& label, bool several_runs, const std::string& text) {
    return several_runs && !label.empty() ? "[" + label + "] " + text : text;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& from) { to.insert(to.end(), from.begin(), from.end()); }

std::string side_name(bool real) { return real ? "real GPU" : "simulator"; }

}  // namespace

std::vector<MergedCase> merge_runs(const std::vector<SideRun>& runs) {
    std::vector<MergedCase> merged;
    std::map<std::string, std::size_t> index;
    const bool several = runs.size() > 1;
    for (const auto& run : runs) {
        for (const auto& result : run.results.cases) {
            auto [where, inserted] = index.emplace(result.name, merged.size());
            if (inserted) {
                merged.emplace_back();
                merged.back().name = result.name;
            }
            MergedCase& entry = merged[where->second];
            for (const auto& failure : result.failures) entry.failures.push_back(labelled(run.label, several, failure));
            for (const auto& reason : result.skip_reasons) entry.skip_reasons.push_back(labelled(run.label, several, reason));
            if (result.outcome != Outcome::Skipped)
                for (const auto& skip : result.partial_skips) entry.partial_skips.push_back(labelled(run.label, several, skip));
            if (precedence(result.outcome) > precedence(entry.outcome)) entry.outcome = result.outcome;
        }
    }
    return merged;
}

void compare_program(const std::string& program, const std::vector<SideRun>& simulator_runs,
                     const std::vector<SideRun>& real_runs, Comparison& into) {
    for (bool real : {false, true})
        for (const auto& run : real ? real_runs : simulator_runs)
            if (!run.problem.empty())
                into.program_problems.push_back(program + " on the " + side_name(real) +
                                                (run.label.empty() ? "" : " (" + run.label + ")") + ": " + run.problem);

    const auto simulator_cases = merge_runs(simulator_runs);
    const auto real_cases = merge_runs(real_runs);
    // Every case either side knows, in the simulator's order, then any the real side alone has.
    std::vector<std::string> names;
    std::map<std::string, const MergedCase*> on_simulator, on_real;
    for (const auto& c : simulator_cases) {
        names.push_back(c.name);
        on_simulator[c.name] = &c;
    }
    for (const auto& c : real_cases) {
        if (!on_simulator.count(c.name)) names.push_back(c.name);
        on_real[c.name] = &c;
    }
    // Why a side has no result for a case: its runs' problems, or a report that lacks it.
    auto missing_reason = [&](const std::vector<SideRun>& runs) {
        for (const auto& run : runs)
            if (!run.problem.empty()) return run.problem;
        return std::string("the case is not in its report");
    };

    for (const auto& name : names) {
        const MergedCase* simulator = on_simulator.count(name) ? on_simulator[name] : nullptr;
        const MergedCase* real = on_real.count(name) ? on_real[name] : nullptr;
        CaseComparison row{program, name, simulator ? simulator->outcome : Outcome::NotRun,
                           real ? real->outcome : Outcome::NotRun, {}};
        // The simulator hosts every scenario: a skip there is a difference, whatever the real side did.
        if (row.real == Outcome::Skipped && row.simulator != Outcome::Skipped) {
            append(row.details, real->skip_reasons);
            into.skipped.push_back(std::move(row));
            continue;
        }
        ++into.compared;
        if (row.real == Outcome::Passed || row.real == Outcome::Failed) ++into.real_cases_run;
        if (row.simulator != row.real || row.simulator == Outcome::Skipped) {
            for (bool on_real_side : {false, true}) {
                const MergedCase* side = on_real_side ? real : simulator;
                const std::string prefix = side_name(on_real_side) + ": ";
                if (side == nullptr) {
                    row.details.push_back(prefix + "did not run: " + missing_reason(on_real_side ? real_runs : simulator_runs));
                } else {
                    for (const auto& failure : side->failures) row.details.push_back(prefix + failure);
                    if (side->outcome == Outcome::Skipped)
                        for (const auto& reason : side->skip_reasons) row.details.push_back(prefix + "skipped: " + reason);
                }
            }
            into.differing.push_back(std::move(row));
        } else if (real != nullptr && !real->partial_skips.empty()) {
            row.details = real->partial_skips;
            into.partly_skipped.push_back(std::move(row));
        }
    }
}

}  // namespace mgpu::validate
