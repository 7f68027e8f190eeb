#include "support/host_race_checks.h"

#include "mgpu/check/harness.h"
#include "mgpu/check/host_races.h"

namespace suite {

bool skip_without_race_detector() {
    if (mgpu::check::race_detector_active()) return false;
    mgpu::check::skip("the race check runs the code under ThreadSanitizer, on the simulator only; this build has "
                      "none (on this machine the compiler's ThreadSanitizer could not build or run a program)");
    return true;
}

bool expect_no_host_races(const std::string& call_text, const std::string& section) {
    const auto races = mgpu::check::host_races();
    for (const auto& race : races) {
        const std::string here = race.file.empty() ? std::string("your code") : race.file + ":" + std::to_string(race.line);
        const std::string there = race.other_file.empty()
                                      ? std::string("another access")
                                      : (race.other_file == race.file && race.other_line == race.line
                                             ? std::string("the same line")
                                             : race.other_file + ":" + std::to_string(race.other_line));
        mgpu::check::Finding finding;
        finding.check = call_text + "'s threads share no memory without a lock or a join between their accesses";
        finding.expected = "no data race";
        finding.observed = here + (race.write ? " writes" : " reads") + " memory that " + there + " " +
                           (race.other_write ? "writes" : "reads") +
                           " on another thread, with no lock, join or atomic between the two: a data race. Its result "
                           "depends on the timing (entries lost, a container broken) even where this run looked right. "
                           "Hold a std::mutex around every access to what the threads share, or give each thread a "
                           "slot of its own (a vector sized before the threads start, one element per thread)";
        finding.file = race.file;
        finding.line = race.line;
        finding.section = section;
        mgpu::check::fail(finding);
    }
    return races.empty();
}

}  // namespace suite
