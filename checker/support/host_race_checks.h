// The race cases of the lessons whose host threads share the student's state (lessons 1 and 2):
// the student's function runs in the judge's ThreadSanitizer build, and every data race reported
// between two of its accesses is a finding at the student's line (docs/host-races.md).
#pragma once

#include <string>

namespace suite {

// Skips the case, saying why, in a build without ThreadSanitizer (the judge's plain build on a
// machine whose compiler has none, or real GPUs). Returns true when skipped.
bool skip_without_race_detector();

// One finding per pair of racing lines seen since the case started: `call_text`'s threads touched
// the same memory, at least one of them writing, with nothing ordering the two. `section` is the
// lesson section that teaches sharing between threads.
bool expect_no_host_races(const std::string& call_text, const std::string& section);

}  // namespace suite
