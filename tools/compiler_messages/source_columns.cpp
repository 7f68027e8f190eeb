#include "source_columns.h"

namespace mgpu::messages {

std::optional<int> original_column(const std::string& original, const std::string& rewritten, int column) {
    if (original == rewritten) return column;
    if (column < 1) return std::nullopt;
    const std::size_t at = static_cast<std::size_t>(column - 1);
    std::size_t prefix = 0;
    while (prefix < original.size() && prefix < rewritten.size() && original[prefix] == rewritten[prefix]) ++prefix;
    if (at < prefix) return column;
    std::size_t suffix = 0;
    while (suffix < original.size() && suffix < rewritten.size() &&
           original[original.size() - 1 - suffix] == rewritten[rewritten.size() - 1 - suffix])
        ++suffix;
    if (at >= rewritten.size() || rewritten.size() - at > suffix) return std::nullopt;
    return column - static_cast<int>(rewritten.size()) + static_cast<int>(original.size());
}

}  // namespace mgpu::messages
