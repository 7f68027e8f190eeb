// How a conformance test says "this case cannot be checked on this machine" instead of failing.
//
// On real GPUs a case's scenario may be impossible to host (too few GPUs, other peer pairs, a
// schedule or an injected fault that exists in the simulator only). Such a case ends by throwing
// CaseSkipped; a preset skipped inside a loop over presets is noted in a doctest message. Both
// texts begin with kSkipMarker, which is how conformance_main.cpp's listener and the
// conformance-compare program (tools/validate) tell a skip from a failure.
#pragma once

#include <stdexcept>
#include <string>

namespace conformance {

inline constexpr const char* kSkipMarker = "skipped on this machine: ";

struct CaseSkipped : std::runtime_error {
    explicit CaseSkipped(const std::string& reason) : std::runtime_error(kSkipMarker + reason) {}
};

}  // namespace conformance
