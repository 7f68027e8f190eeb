// cu2cpp keeps every line of a .cu file where it was, but a launch line is rewritten, so a column
// the compiler gives on such a line counts characters of the rewritten text. This maps it back to
// the line as written, where that can be done without guessing.
#pragma once

#include <optional>
#include <string>

namespace mgpu::messages {

// The 1-based column of `original` that shows what `column` of `rewritten` shows: the same column
// before the first difference, shifted by the change in length after the last one; nothing when
// the column falls in the rewritten part itself.
std::optional<int> original_column(const std::string& original, const std::string& rewritten, int column);

}  // namespace mgpu::messages
