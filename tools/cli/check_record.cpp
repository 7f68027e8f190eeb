#include "check_record.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "lesson_files.h"
#include "lessons.h"
#include "progress.h"

namespace mgpu::cli {

using nlohmann::json;

namespace {

bool has_tag(const json& test, const std::string& tag) {
    if (!test.contains("tags")) return false;
    for (const json& each : test.at("tags"))
        if (each.is_string() && each.get<std::string>() == tag) return true;
    return false;
}

// The criteria in the rubric's order, which is the order the terminal report shows them in.
std::vector<std::string> criteria_in_order(const Kit& kit, int lesson) {
    std::vector<std::string> names;
    auto folder = lesson_folder(kit.root / "checker" / "lessons", lesson);
    if (!folder) return names;
    json rubric = json::parse(read_text(*folder / "rubric.json"), nullptr, false);
    if (rubric.is_discarded() || !rubric.contains("criteria")) return names;
    for (const json& criterion : rubric.at("criteria")) names.push_back(criterion.value("name", ""));
    return names;
}

// The failed case the student meets first in check's report: the first of the earliest criterion.
// results.json lists cases in the order they finished, which differs from run to run.
std::string first_failure(const Kit& kit, const json& results, int lesson) {
    if (!results.contains("tests")) return "";
    const std::vector<std::string> criteria = criteria_in_order(kit, lesson);
    std::string first;
    std::size_t first_rank = std::numeric_limits<std::size_t>::max();
    for (const json& test : results.at("tests")) {
        if (test.value("status", "") != "failed" || !has_tag(test, "lesson " + std::to_string(lesson))) continue;
        std::size_t rank = criteria.size();
        for (std::size_t i = 0; i < criteria.size(); ++i)
            if (has_tag(test, criteria[i])) rank = std::min(rank, i);
        if (first.empty() || rank < first_rank) {
            first = test.value("name", "");
            first_rank = rank;
        }
    }
    return first;
}

}  // namespace

void record_check_results(const Kit& kit, const std::filesystem::path& results_json) {
    json results = json::parse(read_text(results_json), nullptr, false);
    if (results.is_discarded() || !results.contains("extra_data")) return;
    const json& extra = results.at("extra_data");
    if (!extra.contains("lessons")) return;
    Progress progress = Progress::load(progress_file(kit));
    const std::string now = utc_now_iso();
    for (const json& lesson : extra.at("lessons")) {
        const int number = lesson.value("lesson", 0);
        if (number <= 0) continue;
        progress.lessons[number].last_check = CheckRecord{lesson.value("score", 0.0), lesson.value("max_score", 0.0),
                                                          lesson.value("outcome", std::string()),
                                                          first_failure(kit, results, number), now};
    }
    progress.save(progress_file(kit));
}

}  // namespace mgpu::cli
