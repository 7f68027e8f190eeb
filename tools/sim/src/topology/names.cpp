// Helpers for messages that name things: spelling suggestions and readable lists.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

// Case, '-' and '_' differences do not count as misspellings.
std::string normalised(std::string_view word)
{
    std::string out;
    for (char c : word) out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring letters ("devcies") each count one.
std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates)
{
    const std::string wanted = normalised(word);
    // About one typo per four letters, at least one: "sm_cont" matches, "gpus" does not match "name".
    const std::size_t allowed = std::max<std::size_t>(1, wanted.size() / 4);
    std::optional<std::string> best;
    std::size_t best_distance = allowed + 1;
    for (const auto& candidate : candidates) {
        const std::string other = normalised(candidate);
        std::size_t distance = edit_distance(wanted, other);
        // A key cut short ("shared_mem") is a likely slip too.
        if (wanted.size() >= 4 && other.rfind(wanted, 0) == 0) distance = std::min(distance, allowed);
        if (distance < best_distance) {
            best_distance = distance;
            best = candidate;
        }
    }
    return best;
}

std::string join_names(const std::vector<std::string>& names, const char* last)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? last : ", ";
        out += names[i];
    }
    return out;
}

}  // namespace mgpu::sim::topology_detail
