// The channel from the checker binary to the judge: one sealed JSON record per line
// (record_seal.h), written to the write end of a pipe the judge opened. The student's code runs
// in this process too and can write to any descriptor; what it cannot do is seal a record: the
// key is read from another pipe before any test case starts and kept in a page of its own that
// no access is allowed to except while a record is sealed. (The judge's build refuses the calls
// that could reach it: raw system calls, descriptor calls, mprotect, the checker's own symbols.)
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
    std::uint64_t seed = 0x5eed5eedULL;
    std::string topology;
    std::vector<std::string> argv;      // as the process was started, for restart_case_with_environment
    bool restarted = false;             // --mgpu-restarted: this process is such a restart
};

RunSettings& settings();

bool judge_attached();

// Reads "<key> [<next seq>]" from `fd` (the judge's pipe, or a restart's) and closes it.
void take_channel_key(int fd);

// Writes the key and the next record's place to `fd`, for the restarted process; false if it cannot.
bool hand_channel_on(int fd);

// Seals {<record>, "seq": n} and writes it as one line. Does nothing when no judge is attached.
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
