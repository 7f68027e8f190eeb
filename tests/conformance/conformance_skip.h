// How a conformance test says "this case cannot be checked on this machine" instead of failing.
//
// On real GPUs a case's scenario may be impossible to host (too few GPUs, other peer pairs, a
// schedule or an injected fault that exists in the simulator only). Such a case ends by throwing
// CaseSkipped; a preset skipped inside a loop over presets is noted in a doctest message. Both
// texts begin with kSkipMarker. conformance_main.cpp's listener (from doctest's events) and the
// conformance-compare program (tools/validate, from doctest's XML report) both tell a skip from a
// failure with the functions below, so that the two cannot disagree.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace conformance {

inline constexpr const char* kSkipMarker = "skipped on this machine: ";

struct CaseSkipped : std::runtime_error {
    explicit CaseSkipped(const std::string& reason) : std::runtime_error(kSkipMarker + reason) {}
};

// The reason, when `text` is a skip. doctest writes an exception thrown inside an assertion's
// expression between double quotes, and one thrown out of the test case as it is.
inline std::optional<std::string_view> skip_reason(std::string_view text) {
    if (text.starts_with('"')) {
        text.remove_prefix(1);
        if (text.ends_with('"')) text.remove_suffix(1);
    }
    const std::string_view marker = kSkipMarker;
    if (!text.starts_with(marker)) return std::nullopt;
    return text.substr(marker.size());
}

// What doctest reports for an exception leaving a subcase. The exception itself is reported again
// once it has left the test case, so the stand-in says nothing of its own.
inline bool is_subcase_stand_in(std::string_view text) {
    return text.starts_with("exception thrown in subcase");
}

// Whether a failed test case failed only because the machine cannot host it: a skip was thrown,
// nothing else was, and each failed assertion failed by a skip thrown inside its expression.
inline bool failed_only_by_skips(bool skip_seen, bool other_exception, int failed_assertions, int skipped_assertions) {
    return skip_seen && !other_exception && failed_assertions == skipped_assertions;
}

}  // namespace conformance
