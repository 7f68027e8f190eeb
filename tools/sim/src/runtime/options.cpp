// Schedules and injected faults as text (MGPU_SCHEDULE, MGPU_FAULTS) and the options the
// environment asks for. Needs control.h only: the real-GPU backend links this file too.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "options_text.h"

namespace mgpu::sim {

namespace {

std::uint64_t parse_whole_number(const std::string& text, const std::string& what) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument(what + " must be a whole number, not '" + text + "'");
    try {
        return std::stoull(text);
    } catch (const std::out_of_range&) {
        throw std::invalid_argument(what + " is too large: '" + text + "'");
    }
}

int parse_small_number(const std::string& text, const std::string& what) {
    const std::uint64_t value = parse_whole_number(text, what);
    if (value > 1000000) throw std::invalid_argument(what + " is too large: '" + text + "'");
    return static_cast<int>(value);
}

bool looks_like_pair(const std::string& text) {
    const auto dash = text.find('-');
    return dash != std::string::npos && dash > 0 && dash + 1 < text.size() &&
           text.find_first_not_of("0123456789-") == std::string::npos;
}

}  // namespace

Schedule parse_schedule(const std::string& text) {
    if (text == "eager") return Schedule{ScheduleKind::Eager, 0};
    if (text == "lazy") return Schedule{ScheduleKind::Lazy, 0};
    if (text == "shuffle") return Schedule{ScheduleKind::Shuffle, 0};
    if (text.rfind("shuffle:", 0) == 0)
        return Schedule{ScheduleKind::Shuffle, parse_whole_number(text.substr(8), "the shuffle seed")};
    throw std::invalid_argument("unknown schedule '" + text + "': use eager, lazy or shuffle:SEED (SEED a whole number)");
}

std::string to_string(const Schedule& schedule) {
    switch (schedule.kind) {
    case ScheduleKind::Eager: return "eager";
    case ScheduleKind::Lazy: return "lazy";
    case ScheduleKind::Shuffle: return "shuffle:" + std::to_string(schedule.seed);
    }
    return "eager";
}

Faults parse_faults(const std::string& text) {
    Faults faults;
    std::string last_key;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = text.substr(start, comma - start);
        start = comma + 1;
        if (item.empty()) continue;
        const auto equals = item.find('=');
        if (equals == std::string::npos) {
            // "nopeer=0-1,2-3": further pairs continue the list.
            if (last_key == "nopeer" && looks_like_pair(item)) {
                faults.no_peer_pairs += "," + item;
                continue;
            }
            throw std::invalid_argument("MGPU_FAULTS item '" + item + "' has no '=': write malloc=N, stream=N, enable711=N, "
                                        "lost=D, nopeer=A-B or ncclfail=N");
        }
        const std::string key = item.substr(0, equals), value = item.substr(equals + 1);
        last_key = key;
        if (key == "malloc") faults.malloc_fails_at = parse_small_number(value, "malloc");
        else if (key == "stream") faults.stream_create_fails_at = parse_small_number(value, "stream");
        else if (key == "enable711") faults.enable_gives_711_at = parse_small_number(value, "enable711");
        else if (key == "lost") faults.lost_device = parse_small_number(value, "lost");
        else if (key == "ncclfail") faults.nccl_fails_at = parse_small_number(value, "ncclfail");
        else if (key == "nopeer") {
            if (!looks_like_pair(value)) throw std::invalid_argument("nopeer takes device pairs such as 0-1, not '" + value + "'");
            faults.no_peer_pairs += (faults.no_peer_pairs.empty() ? "" : ",") + value;
        } else {
            throw std::invalid_argument("unknown MGPU_FAULTS key '" + key + "': use malloc, stream, enable711, lost, nopeer or ncclfail");
        }
    }
    return faults;
}

Options options_from_environment() {
    Options options;
    if (const char* topology = std::getenv("MGPU_TOPOLOGY"); topology && *topology) options.topology = topology;
    if (const char* schedule = std::getenv("MGPU_SCHEDULE"); schedule && *schedule)
        options.schedule = parse_schedule(schedule);
    if (const char* faults = std::getenv("MGPU_FAULTS"); faults && *faults) options.faults = parse_faults(faults);
    return options;
}

}  // namespace mgpu::sim

namespace mgpu::sim {

std::vector<std::pair<int, int>> parse_peer_pairs(const std::string& text) {
    std::vector<std::pair<int, int>> pairs;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find_first_of(",; ", start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        start = end + 1;
        if (item.empty()) continue;
        if (!looks_like_pair(item) || item.find('-') != item.rfind('-'))
            throw std::invalid_argument("no_peer_pairs takes pairs such as 0-1, not '" + item + "'");
        const auto dash = item.find('-');
        pairs.emplace_back(parse_small_number(item.substr(0, dash), "a device"),
                           parse_small_number(item.substr(dash + 1), "a device"));
    }
    return pairs;
}

}  // namespace mgpu::sim
