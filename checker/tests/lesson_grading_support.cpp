#include "lesson_grading_support.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "reports.h"

namespace lesson_tests {

namespace fs = std::filesystem;

namespace {

std::string name_prefix(const TestedLesson& lesson) { return "lesson " + std::to_string(lesson.number) + ": "; }

}  // namespace

int register_for_each_lesson(void (*body)(), const char* file, unsigned line, const char* title) {
    static std::deque<std::string> names;   // doctest keeps a pointer to each test case's name
    for (const TestedLesson& lesson : tested_lessons()) {
        names.push_back(name_prefix(lesson) + title);
        doctest::detail::regTest(
            doctest::detail::TestCase(body, file, line, doctest_detail_test_suite_ns::getCurrentTestSuite()) *
            names.back().c_str());
    }
    return 0;
}

const TestedLesson& current_lesson() {
    const doctest::detail::TestCase* test = doctest::getContextOptions()->currentTest;
    if (test != nullptr) {
        const std::string name = test->m_name;
        for (const TestedLesson& lesson : tested_lessons()) {
            if (name.rfind(name_prefix(lesson), 0) == 0) return lesson;
        }
    }
    throw std::logic_error("current_lesson() is for test cases written with LESSON_TEST_CASE");
}

const TestedLesson& tested_lesson(int number) {
    for (const TestedLesson& lesson : tested_lessons()) {
        if (lesson.number == number) return lesson;
    }
    throw std::runtime_error("lesson " + std::to_string(number) + " is not among the tested lessons (checker/tests/meson.build)");
}

mgpu::judge::GradeRequest request_for(const TestedLesson& lesson, const std::string& submission_dir) {
    mgpu::judge::GradeRequest request;
    request.kit_root = MGPU_KIT_ROOT;
    request.submission_dir = submission_dir;
    request.lesson = lesson.number;
    request.lessons_build_dir = MGPU_LESSONS_BUILD;
    request.cache_dir = std::string(MGPU_CHECKER_TEST_CACHE) + "/" + lesson.id;
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

std::string solution_source(const TestedLesson& lesson) {
    return read_text(std::string(MGPU_KIT_ROOT) + "/solutions/" + lesson.id + "/" + lesson.student_file);
}

std::string write_submission(const TestedLesson& lesson, const std::string& name, const std::string& source) {
    const fs::path root = fs::path(MGPU_CHECKER_TEST_CACHE) / (std::string(lesson.id) + "-submissions") / name;
    fs::create_directories(root / lesson.id);
    std::ofstream(root / lesson.id / lesson.student_file, std::ios::binary | std::ios::trunc) << source;
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
    throw std::runtime_error("no criterion \"" + name + "\" in the rubric of lesson " + std::to_string(lesson.number));
}

std::string report_text(const mgpu::judge::GradeReport& report) {
    return mgpu::judge::terminal_report(report, false, false);
}

}  // namespace lesson_tests
