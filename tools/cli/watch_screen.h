// What `watch` shows of check's report after each save: the part that fits a screen.
#pragma once

#include <string>

namespace mgpu::cli {

// The score table, then the first failed check with what was expected and observed, and the score
// line. A report without failures (or one about a build error) is returned whole.
std::string first_screen(const std::string& report, int lesson);

}  // namespace mgpu::cli
