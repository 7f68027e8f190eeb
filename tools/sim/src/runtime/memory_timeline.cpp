#include "memory_timeline.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

namespace mgpu::sim::rt {

namespace {
// Times are sums of doubles; gaps shorter than this are rounding, not room for work.
constexpr double kEpsilonUs = 1e-9;
}  // namespace

double MemoryTimeline::occupy(double from_us, double busy_us) {
    if (busy_us <= 0) return from_us;
    double t = from_us;
    // Starting inside a booked range: the memory is free only at its end.
    auto next = busy_.upper_bound(t);
    if (next != busy_.begin()) {
        const auto previous = std::prev(next);
        if (previous->second > t) t = previous->second;
    }
    double remaining = busy_us;
    std::vector<std::pair<double, double>> pieces;
    while (remaining > kEpsilonUs) {
        next = busy_.lower_bound(t);
        const double gap_end = next == busy_.end() ? std::numeric_limits<double>::infinity() : next->first;
        const double used = std::min(remaining, gap_end - t);
        if (used > kEpsilonUs) {
            pieces.emplace_back(t, t + used);
            remaining -= used;
            t += used;
        }
        if (remaining > kEpsilonUs && next != busy_.end()) t = std::max(t, next->second);
    }
    for (const auto& [begin, end] : pieces) book(begin, end);
    return t;
}

void MemoryTimeline::book(double begin_us, double end_us) {
    // Merge with a range that ends where this one begins, and with ranges this one reaches.
    auto it = busy_.lower_bound(begin_us);
    if (it != busy_.begin()) {
        const auto previous = std::prev(it);
        if (previous->second >= begin_us - kEpsilonUs) {
            begin_us = previous->first;
            end_us = std::max(end_us, previous->second);
            it = busy_.erase(previous);
        }
    }
    while (it != busy_.end() && it->first <= end_us + kEpsilonUs) {
        end_us = std::max(end_us, it->second);
        it = busy_.erase(it);
    }
    busy_.emplace(begin_us, end_us);
}

}  // namespace mgpu::sim::rt
