#include "lesson_grading_support.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "reports.h"

namespace lesson_tests {

namespace fs = std::filesystem;

mgpu::judge::GradeRequest request_for(const std::string& submission_dir) {
    mgpu::judge::GradeRequest request;
    request.kit_root = MGPU_KIT_ROOT;
    request.submission_dir = submission_dir;
    request.lesson = MGPU_TEST_LESSON;
    request.lessons_build_dir = MGPU_LESSONS_BUILD;
    request.cache_dir = std::string(MGPU_CHECKER_TEST_CACHE) + "/" + MGPU_TEST_LESSON_ID;
    request.jobs = 2;
    return request;   // the limits of real grading (grade.h)
}

double endless_loop_cpu_seconds() { return mgpu::judge::GradeRequest{}.case_cpu_seconds / 5; }

std::string read_text(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error("cannot read " + path);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

std::string solution_source() {
    return read_text(std::string(MGPU_KIT_ROOT) + "/solutions/" MGPU_TEST_LESSON_ID "/" MGPU_TEST_STUDENT_FILE);
}

std::string write_submission(const std::string& name, const std::string& source) {
    const fs::path root = fs::path(MGPU_CHECKER_TEST_CACHE) / (std::string(MGPU_TEST_LESSON_ID) + "-submissions") / name;
    fs::create_directories(root / MGPU_TEST_LESSON_ID);
    std::ofstream(root / MGPU_TEST_LESSON_ID / MGPU_TEST_STUDENT_FILE, std::ios::binary | std::ios::trunc) << source;
    return root.string();
}

std::string apply_edits(std::string source, const nlohmann::json& edits) {
    for (const auto& edit : edits) {
        const std::string find = edit.at("find").get<std::string>();
        const auto at = source.find(find);
        if (at == std::string::npos) {
            throw std::runtime_error("the reference solution no longer contains the text this edit replaces:\n" + find);
        }
        source.replace(at, find.size(), edit.at("replace").get<std::string>());
    }
    return source;
}

bool in_this_shard(std::size_t index) {
    const char* shard = std::getenv("MGPU_CHECKER_SHARD");
    if (shard == nullptr) return true;
    unsigned mine = 0, count = 1;
    if (std::sscanf(shard, "%u/%u", &mine, &count) != 2 || count == 0) return true;
    return index % count == mine;
}

const mgpu::judge::CriterionResult& criterion(const mgpu::judge::LessonResult& lesson, const std::string& name) {
    for (const auto& result : lesson.criteria) {
        if (result.criterion.name == name) return result;
    }
    throw std::runtime_error("no criterion \"" + name + "\" in the rubric of lesson " + std::to_string(MGPU_TEST_LESSON));
}

std::string report_text(const mgpu::judge::GradeReport& report) {
    return mgpu::judge::terminal_report(report, false, false);
}

}  // namespace lesson_tests
