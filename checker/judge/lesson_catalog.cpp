#include "lesson_catalog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace mgpu::judge {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw KitError("cannot read " + path.string());
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

json read_json(const fs::path& path, std::string* text_out = nullptr) {
    std::string text = read_text(path);
    if (text_out) *text_out = text;
    try {
        return json::parse(text);
    } catch (const json::exception& error) {
        throw KitError(path.string() + " is not valid JSON: " + error.what());
    }
}

template <typename T>
T field(const json& object, const char* name, const fs::path& file) {
    if (!object.contains(name)) throw KitError(file.string() + " lacks the field \"" + name + "\"");
    try {
        return object.at(name).get<T>();
    } catch (const json::exception& error) {
        throw KitError(file.string() + ": field \"" + name + "\" has the wrong type: " + error.what());
    }
}

template <typename T>
T optional_field(const json& object, const char* name, T fallback, const fs::path& file) {
    if (!object.contains(name)) return fallback;
    return field<T>(object, name, file);
}

}  // namespace

LessonBuild load_lesson_build(const std::string& path_text) {
    const fs::path path(path_text);
    if (!fs::exists(path)) {
        throw KitError(path.string() + " is missing: the lesson's checker has not been built (run ninja in the build "
                                       "directory, or tools/mgpu check, which builds it)");
    }
    LessonBuild build;
    json manifest = read_json(path, &build.manifest_text);
    build.cxx = field<std::vector<std::string>>(manifest, "cxx", path);
    build.cxx_flags = optional_field<std::vector<std::string>>(manifest, "cxx_flags", {}, path);
    build.include_dirs = optional_field<std::vector<std::string>>(manifest, "include_dirs", {}, path);
    build.link_archives = field<std::vector<std::string>>(manifest, "link_archives", path);
    build.link_flags = optional_field<std::vector<std::string>>(manifest, "link_flags", {}, path);
    build.cu2cpp = optional_field<std::string>(manifest, "cu2cpp", "", path);
    build.prelude = optional_field<std::string>(manifest, "prelude", "", path);
    build.nvcc = optional_field<std::vector<std::string>>(manifest, "nvcc", {}, path);
    build.nvcc_flags = optional_field<std::vector<std::string>>(manifest, "nvcc_flags", {}, path);
    build.race_flags = optional_field<std::vector<std::string>>(manifest, "race_flags", {}, path);
    build.race_prelude = optional_field<std::string>(manifest, "race_prelude", "", path);
    if (build.cxx.empty()) throw KitError(path.string() + ": \"cxx\" is empty");
    return build;
}

const Criterion* Rubric::find(const std::string& name) const {
    for (const auto& criterion : criteria) {
        if (criterion.name == name) return &criterion;
    }
    return nullptr;
}

double Rubric::total_points() const {
    double total = 0;
    for (const auto& criterion : criteria) total += criterion.points;
    return total;
}

std::string criterion_of(const std::string& test_case_name) {
    auto colon = test_case_name.find(": ");
    return colon == std::string::npos ? std::string() : test_case_name.substr(0, colon);
}

Rubric load_rubric(const std::string& path_text) {
    const fs::path path(path_text);
    json document = read_json(path);
    Rubric rubric;
    rubric.lesson_text = optional_field<std::string>(document, "lesson_text", "", path);
    std::set<std::string> names;
    for (const json& entry : field<json>(document, "criteria", path)) {
        Criterion criterion;
        criterion.name = field<std::string>(entry, "name", path);
        criterion.points = field<double>(entry, "points", path);
        criterion.section = optional_field<std::string>(entry, "section", "", path);
        criterion.section_title = optional_field<std::string>(entry, "section_title", "", path);
        criterion.description = optional_field<std::string>(entry, "description", "", path);
        if (criterion.name.empty() || criterion.name.find(':') != std::string::npos) {
            throw KitError(path.string() + ": a criterion name must be non-empty and without ':'");
        }
        if (!(criterion.points > 0)) throw KitError(path.string() + ": criterion \"" + criterion.name + "\" has no points");
        if (!names.insert(criterion.name).second) {
            throw KitError(path.string() + ": criterion \"" + criterion.name + "\" appears twice");
        }
        rubric.criteria.push_back(criterion);
    }
    if (rubric.criteria.empty()) throw KitError(path.string() + " has no criteria");
    return rubric;
}

std::vector<Lesson> load_lessons(const LessonPaths& paths) {
    std::vector<Lesson> lessons;
    std::error_code error;
    if (!fs::is_directory(paths.lessons_dir, error)) throw KitError("no lessons folder at " + paths.lessons_dir);
    for (const auto& entry : fs::directory_iterator(paths.lessons_dir)) {
        const fs::path config_path = entry.path() / "lesson.json";
        if (!entry.is_directory() || !fs::exists(config_path)) continue;
        json config = read_json(config_path);
        Lesson lesson;
        lesson.id = entry.path().filename().string();
        lesson.source_dir = entry.path().string();
        lesson.number = field<int>(config, "number", config_path);
        lesson.title = field<std::string>(config, "title", config_path);
        lesson.exercise_dir = (fs::path(paths.kit_root) / field<std::string>(config, "exercise_dir", config_path)).string();
        lesson.student_files = field<std::vector<std::string>>(config, "student_files", config_path);
        // lesson.json names the functions in C++ ("plan_even_split"); their exact signatures, as the
        // compiler spells them, are the build's (tools/lessons/interface-signatures).
        lesson.interface_file = (fs::path(paths.lessons_build_dir) / lesson.id / "interface.json").string();
        if (fs::exists(lesson.interface_file, error)) {
            lesson.interface = field<std::vector<std::string>>(read_json(lesson.interface_file), "signatures",
                                                                lesson.interface_file);
        }
        if (lesson.student_files.empty()) throw KitError(config_path.string() + ": no student_files");
        lesson.rubric = load_rubric((entry.path() / "rubric.json").string());
        lesson.build_manifest = (fs::path(paths.lessons_build_dir) / lesson.id / "checker-build.json").string();
        lesson.cuda_build_manifest = (fs::path(paths.lessons_build_dir) / lesson.id / "checker-build-cuda.json").string();
        lessons.push_back(std::move(lesson));
    }
    std::sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) { return a.number < b.number; });
    return lessons;
}

}  // namespace mgpu::judge
