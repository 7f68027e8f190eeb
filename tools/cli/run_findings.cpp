#include "run_findings.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "translate.h"

namespace mgpu::cli {

namespace {

using nlohmann::json;

std::string at(const json& place) {
    const std::string file = place.value("file", "");
    if (file.empty()) return tr("an unknown place");
    return file + ":" + std::to_string(place.value("line", 0));
}

std::string microseconds(double us) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", us);
    return text;
}

std::string stream_name(const json& op) {
    const auto stream = op.value("stream", std::uint64_t{0});
    return stream == 0 ? tr("the default stream") : stream == 2 ? tr("the per-thread stream") : "stream#" + std::to_string(stream);
}

// "kernel scale at peer_access.cu:151 (device 3, stream#18, 12.4-15.0 us)"
std::string operation(const json& op) {
    const std::string kind = op.value("kind", "");
    const std::string what = kind == "kernel" ? fill(tr("kernel {}"), op.value("name", "")) : op.value("name", kind);
    return fill(tr("{0} at {1} (device {2}, {3}, {4}-{5} us)"), what, at(op), op.value("device", 0), stream_name(op),
                microseconds(op.value("start_us", 0.0)), microseconds(op.value("end_us", 0.0)));
}

std::string read_hint(const FindingSections& sections, int lesson, const std::string& kind) {
    auto it = sections.find(kind);
    if (it == sections.end() || lesson <= 0) return "";
    return "\n          " + fill(tr("read: lesson {0}, section {1}"), lesson, tr(it->second));
}

std::string counted(std::size_t count, const char* one, const char* many) { return fill_count(count, one, many); }

}  // namespace

RunFindings read_run_findings(const std::filesystem::path& report, const FindingSections& sections, int lesson) {
    RunFindings findings;
    std::ifstream in(report);
    if (!in) return findings;
    json data = json::parse(in, nullptr, false);
    if (data.is_discarded() || !data.is_object()) return findings;
    std::ostringstream out;

    // Races first: they explain wrong results, which the program may already have printed.
    // One block per pair of lines (a loop races once per chunk); the first time is the example.
    std::map<std::pair<std::string, std::string>, std::pair<json, int>> races;
    std::vector<std::pair<std::string, std::string>> race_order;
    for (const json& race : data.value("races", json::array())) {
        const std::pair<std::string, std::string> lines{at(race["second"]), at(race["first"])};
        auto [entry, inserted] = races.try_emplace(lines, race, 0);
        ++entry->second.second;
        if (inserted) race_order.push_back(lines);
    }
    constexpr std::size_t kRacesShown = 3;
    for (std::size_t shown = 0; shown < race_order.size(); ++shown) {
        if (shown == kRacesShown) {
            out << "  (" << fill(tr("{} more pairs of lines raced: fix the ones above first, later ones often follow "
                                    "from them"), race_order.size() - kRacesShown) << ")\n";
            break;
        }
        const auto& [race, times] = races[race_order[shown]];
        // The one that started later is the one that should have waited.
        const json& earlier = race["first"];
        const json& later = race["second"];
        const std::size_t bytes = race.value("bytes", std::size_t{0});
        out << "  race    " << operation(later) << "\n          " << fill(tr("started while {}"), operation(earlier))
            << "\n          "
            << (race.value("second_writes", false)
                    ? counted(bytes, N_("was still using {} byte that it overwrites;"),
                              N_("was still using {} bytes that it overwrites;"))
                    : counted(bytes, N_("was still writing {} byte that it uses;"),
                              N_("was still writing {} bytes that it uses;")))
            << " " << tr("nothing ordered the two, so it may see old data, new data or a mix.") << "\n          "
            << tr("Make its stream wait for an event recorded after the earlier one (cudaEventRecord, then\n"
                  "          cudaStreamWaitEvent), or wait for the earlier one on the host first.")
            << read_hint(sections, lesson, "race") << "\n";
        if (times > 1) out << "          (" << fill(tr("the same two lines raced {} times in this run"), times) << ")\n";
    }
    findings.count += static_cast<int>(race_order.size());

    // The first few are the example: work nobody waited for is usually a whole loop's.
    constexpr std::size_t kUnfinishedShown = 3;
    const json unfinished = data.value("unfinished", json::array());
    for (std::size_t index = 0; index < unfinished.size(); ++index) {
        if (index == kUnfinishedShown) {
            out << "  (" << fill(tr("{} more operations were still running at the end"), unfinished.size() - kUnfinishedShown)
                << ")\n";
            findings.count += static_cast<int>(unfinished.size() - kUnfinishedShown);
            break;
        }
        const json& op = unfinished[index];
        out << "  unfinished  " << operation(op) << "\n          "
            << fill(tr("was still running when the program ended (its last call returned at {} us): nothing waited for "
                       "it, so its results were never there to read. Wait for the stream (cudaStreamSynchronize) or the "
                       "device before using them."),
                    microseconds(data.value("program_end_us", 0.0)))
            << read_hint(sections, lesson, "unfinished") << "\n";
        ++findings.count;
    }

    // One line per place that leaked, however many times the leaking code ran.
    std::map<std::tuple<std::string, std::string, int>, std::pair<std::size_t, std::size_t>> leaks;   // count, bytes
    for (const json& leak : data.value("leaks", json::array())) {
        auto& entry = leaks[{leak.value("kind", ""), at(leak["at"]), leak.value("device", -1)}];
        ++entry.first;
        entry.second += leak.value("bytes", std::size_t{0});
    }
    for (const auto& [key, totals] : leaks) {
        const auto& [kind, place, device] = key;
        const auto [count, bytes] = totals;
        // "on device N" only where the leak belongs to a device.
        const auto where = [&, device = device, place = place](const char* with_device, const char* without) {
            return device >= 0 ? fill(tr(with_device), place, device) : fill(tr(without), place);
        };
        out << "  leak    ";
        if (kind == "stream")
            out << counted(count, N_("{} stream"), N_("{} streams")) << " "
                << where(N_("created at {0} on device {1}"), N_("created at {0}")) << " "
                << tr(count == 1 ? N_("was never destroyed (cudaStreamDestroy)") : N_("were never destroyed (cudaStreamDestroy)"))
                << read_hint(sections, lesson, "stream");
        else if (kind == "event")
            out << counted(count, N_("{} event"), N_("{} events")) << " "
                << where(N_("created at {0} on device {1}"), N_("created at {0}")) << " "
                << tr(count == 1 ? N_("was never destroyed (cudaEventDestroy)") : N_("were never destroyed (cudaEventDestroy)"))
                << read_hint(sections, lesson, "event");
        else if (kind == "device memory")
            out << counted(bytes, N_("{} byte of device memory"), N_("{} bytes of device memory")) << " "
                << counted(count, N_("in {} allocation"), N_("in {} allocations")) << " "
                << where(N_("made at {0} on device {1}"), N_("made at {0}")) << " "
                << tr(count == 1 ? N_("was never freed (cudaFree)") : N_("were never freed (cudaFree)"))
                << read_hint(sections, lesson, "memory");
        else if (kind == "page-locked memory")
            out << counted(bytes, N_("{} byte of page-locked host memory"), N_("{} bytes of page-locked host memory"))
                << " " << fill(tr("allocated at {}"), place) << " "
                << tr(count == 1 ? N_("was never freed (cudaFreeHost)") : N_("were never freed (cudaFreeHost)"))
                << read_hint(sections, lesson, "memory");
        else
            out << counted(bytes, N_("{} byte"), N_("{} bytes")) << " " << fill(tr("registered at {}"), place) << " "
                << tr(count == 1 ? N_("was never unregistered (cudaHostUnregister)")
                                 : N_("were never unregistered (cudaHostUnregister)"))
                << read_hint(sections, lesson, "memory");
        out << "\n";
        ++findings.count;
    }
    findings.text = out.str();
    return findings;
}

}  // namespace mgpu::cli
