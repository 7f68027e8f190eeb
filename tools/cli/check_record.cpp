#include "check_record.h"

#include <nlohmann/json.hpp>

#include "lesson_files.h"
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

std::string first_failure(const json& results, int lesson) {
    if (!results.contains("tests")) return "";
    for (const json& test : results.at("tests"))
        if (test.value("status", "") == "failed" && has_tag(test, "lesson " + std::to_string(lesson)))
            return test.value("name", "");
    return "";
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
                                                          first_failure(results, number), now};
    }
    progress.save(progress_file(kit));
}

}  // namespace mgpu::cli
