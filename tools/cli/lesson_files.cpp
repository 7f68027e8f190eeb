#include "lesson_files.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "lessons.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<int> kit_lessons(const Kit& kit) { return lessons_in(kit.root / "exercises"); }

int lesson_argument(const std::string& text) {
    auto number = parse_lesson_number(text);
    if (!number) throw UsageError(fill(tr("'{}' is not a lesson number (1, 2, 3, ...)"), text));
    return *number;
}

LessonFiles lesson_files(const Kit& kit, int number) {
    auto exercise = lesson_folder(kit.root / "exercises", number);
    if (!exercise) throw UsageError(no_such_lesson(kit.root / "exercises", number));
    LessonFiles lesson;
    lesson.number = number;
    lesson.exercise_folder = *exercise;
    lesson.lesson_folder = kit.root / "lessons" / exercise->filename();
    lesson.skeleton_folder = lesson.lesson_folder / "skeleton";

    // The checker's lesson.json names the files the student writes; without it (a kit without the
    // checker), every file the skeleton holds is one.
    const fs::path description = kit.root / "checker" / "lessons" / exercise->filename() / "lesson.json";
    const std::string text = read_text(description);
    if (!text.empty()) {
        auto document = nlohmann::json::parse(text, nullptr, false);
        if (!document.is_discarded()) {
            lesson.title = document.value("title", std::string());
            if (document.contains("student_files"))
                lesson.student_files = document.at("student_files").get<std::vector<std::string>>();
        }
    }
    if (lesson.student_files.empty()) {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(lesson.skeleton_folder, error))
            if (entry.is_regular_file()) lesson.student_files.push_back(entry.path().filename().string());
    }
    if (lesson.title.empty()) {
        // "# Lesson 3: Peer-to-peer memory access" -> "Peer-to-peer memory access"
        std::istringstream readme(read_text(lesson.lesson_folder / "README.md"));
        std::string first_line;
        std::getline(readme, first_line);
        auto colon = first_line.find(": ");
        lesson.title = colon == std::string::npos ? exercise->filename().string() : first_line.substr(colon + 2);
    }
    return lesson;
}

}  // namespace mgpu::cli
