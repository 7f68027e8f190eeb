// The channel from the checker binary to the judge: one JSON object per line, each carrying
// the run's nonce, written to a file descriptor the judge opened. The student's code runs in
// this process too; it can print anything to stdout, but it does not know the nonce (read from
// a pipe before any test case starts), so only records written here are believed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mgpu/check/harness.h"

namespace mgpu::check::detail {

struct RunSettings {
    int result_fd = -1;                 // -1: run by hand, no judge
    std::string nonce;
    std::uint64_t seed = 0x5eed5eedULL;
    std::string topology;
    std::vector<std::string> argv;      // as the process was started, for restart_case_with_environment
    bool restarted = false;             // --mgpu-restarted: this process is such a restart
};

RunSettings& settings();

bool judge_attached();

// Writes {"nonce": ..., <record>} as one line. Does nothing when no judge is attached.
void send(nlohmann::json record);

// State of the test case that is running.
struct CaseState {
    std::string name;
    std::string scenario;
    std::optional<std::string> skip_reason;
    std::optional<Finding> pending_finding;   // set by fail() just before it raises the doctest failure
    int findings = 0;
    int scenarios = 0;                        // set_scenario calls so far
};

CaseState& current_case();
void begin_case(const std::string& name);

}  // namespace mgpu::check::detail
