#include "progress.h"

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string utc_now(const char* format) {
    std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm parts{};
    ::gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, format, &parts);
    return text;
}

json to_json(const LessonProgress& lesson) {
    json entry = json::object();
    if (lesson.last_check) {
        const CheckRecord& check = *lesson.last_check;
        entry["last_check"] = {{"score", check.score},
                               {"max_score", check.max_score},
                               {"outcome", check.outcome},
                               {"first_failure", check.first_failure},
                               {"when", check.when}};
    }
    if (!lesson.hints_shown.empty()) entry["hints_shown"] = lesson.hints_shown;
    if (lesson.quiz) entry["quiz"] = {{"right", lesson.quiz->right}, {"asked", lesson.quiz->asked}, {"when", lesson.quiz->when}};
    return entry;
}

LessonProgress lesson_from_json(const json& entry) {
    LessonProgress lesson;
    if (entry.contains("last_check")) {
        const json& check = entry.at("last_check");
        lesson.last_check = CheckRecord{check.value("score", 0.0), check.value("max_score", 0.0),
                                        check.value("outcome", std::string()), check.value("first_failure", std::string()),
                                        check.value("when", std::string())};
    }
    if (entry.contains("hints_shown"))
        lesson.hints_shown = entry.at("hints_shown").get<std::map<std::string, int>>();
    if (entry.contains("quiz")) {
        const json& quiz = entry.at("quiz");
        lesson.quiz = QuizRecord{quiz.value("right", 0), quiz.value("asked", 0), quiz.value("when", std::string())};
    }
    return lesson;
}

}  // namespace

Progress Progress::load(const fs::path& file) {
    Progress progress;
    std::ifstream in(file);
    if (!in) return progress;
    try {
        json document = json::parse(in);
        for (const auto& [number, entry] : document.at("lessons").items())
            progress.lessons[std::stoi(number)] = lesson_from_json(entry);
    } catch (const std::exception& error) {
        throw SetupError(fill(tr("{} is damaged ({}). Delete it to start the record afresh; your exercise files are not in it."),
                              file.string(), error.what()));
    }
    return progress;
}

void Progress::save(const fs::path& file) const {
    json lessons_json = json::object();
    for (const auto& [number, lesson] : lessons) lessons_json[std::to_string(number)] = to_json(lesson);
    json document{{"lessons", lessons_json}};
    fs::create_directories(file.parent_path());
    const fs::path temporary = file.string() + ".new";
    {
        std::ofstream out(temporary);
        out << document.dump(2) << "\n";
        if (!out) throw SetupError("could not write " + temporary.string());
    }
    fs::rename(temporary, file);
}

fs::path state_folder(const Kit& kit) { return kit.root / ".mgpu"; }

fs::path progress_file(const Kit& kit) { return state_folder(kit) / "progress.json"; }

std::string utc_now_iso() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }

std::string utc_now_stamp() { return utc_now("%Y%m%d-%H%M%S"); }

}  // namespace mgpu::cli
