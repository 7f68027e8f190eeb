// How a comparison is shown: a plain-text table for the terminal, the same as a markdown
// section, and the one summary line both end with:
//   conformance: N cases compared, D differ, S skipped on the real machine
#pragma once

#include <string>

#include "conformance_diff.h"

namespace mgpu::validate {

std::string summary_line(const Comparison& comparison);

// `real_side` names the side compared with the simulator in headings ("real GPU", or the
// simulator itself when the pipeline is exercised without a GPU).
std::string format_text(const Comparison& comparison, const std::string& real_side);
std::string format_markdown(const Comparison& comparison, const std::string& real_side);

}  // namespace mgpu::validate
