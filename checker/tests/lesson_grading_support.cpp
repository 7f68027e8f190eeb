#include "lesson_grading_support.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <regex>
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

std::string first_failed_case(const std::string& report) {
    const auto fix = report.find("What to fix");
    if (fix == std::string::npos) return "";
    const auto begin = report.find("\n  x ", fix);
    if (begin == std::string::npos) return "";
    auto end = report.find("\n  x ", begin + 1);
    // The next criterion, or the score: a blank line and then text at the margin. (An observed
    // text may hold a blank line of its own, as a hang's diagnosis does.)
    auto next_criterion = report.find("\n\n", begin + 1);
    while (next_criterion != std::string::npos && next_criterion + 2 < report.size() && report[next_criterion + 2] == ' ')
        next_criterion = report.find("\n\n", next_criterion + 1);
    if (next_criterion != std::string::npos && (end == std::string::npos || next_criterion < end)) end = next_criterion;
    return report.substr(begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
}

void check_first_explanation(const mgpu::judge::GradeReport& report, const TestedLesson& lesson,
                             const nlohmann::json& explained) {
    const std::string text = report_text(report);
    const std::string shown = first_failed_case(text);
    CAPTURE(shown);
    REQUIRE_FALSE(shown.empty());
    for (const auto& phrase : explained.value("says", nlohmann::json::array())) {
        CAPTURE(phrase.get<std::string>());
        CHECK(shown.find(phrase.get<std::string>()) != std::string::npos);
    }
    if (explained.contains("section")) {
        // The case's own "read:" line, or else its criterion's heading just above it.
        const std::string section = explained.at("section").get<std::string>();
        const std::size_t block = text.find(shown);
        const std::size_t heading = block == std::string::npos || block < 2 ? 0 : text.rfind('\n', block - 2) + 1;
        const std::string above = block == std::string::npos ? "" : text.substr(heading, block - heading);
        CAPTURE(above);
        CHECK(((shown + "\n").find("README.md section " + section + "\n") != std::string::npos ||
               above.find("README.md section " + section + " (") != std::string::npos));
    }
    if (explained.value("at_student_line", false)) {
        // "at:       <submission>/<lesson id>/<student file>:<line>"
        const std::regex at("\n +at: +[^\n]*" + std::string(lesson.id) + "/" + lesson.student_file + ":[1-9][0-9]*\n");
        CHECK(std::regex_search(shown + "\n", at));
    }
}

void check_report_reads_well(const mgpu::judge::GradeReport& report, const TestedLesson& lesson) {
    for (const std::string& path : kit_paths_named(report, lesson)) {
        CAPTURE(path);
        FAIL_CHECK("a finding names a file of the kit instead of the student's code");
    }
    for (const std::string& count : misspelt_counts(report)) {
        CAPTURE(count);
        FAIL_CHECK("a count in the report does not read as English (one thing, several things)");
    }
}

std::vector<std::string> misspelt_counts(const mgpu::judge::GradeReport& report) {
    const std::string text = mgpu::judge::terminal_report(report, false, false, true);
    static const std::regex wrong(
        R"([0-9]+ [A-Za-z]+\(s\)|(?:^|[^0-9.#x+ ] |[(\[])1 (?:entries|elements|shares|copies|records|threads|kernels|calls|)"
        R"(launches|directions|devices|activations|streams|events|bytes|floats|communicators|contexts|ranks|times|)"
        R"(groups|checks|allocations|gradients)\b)");
    std::vector<std::string> found;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), wrong); it != std::sregex_iterator(); ++it)
        found.push_back(it->str());
    return found;
}

std::vector<std::string> kit_paths_named(const mgpu::judge::GradeReport& report, const TestedLesson& lesson) {
    const std::string own = "/" + std::string(lesson.id) + "/" + lesson.student_file;
    const std::string text = mgpu::judge::terminal_report(report, false, false, true);
    static const std::regex kit_path(R"((?:\.\./)*(?:checker|tools)/[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*(?::[0-9]+)?)");
    std::vector<std::string> found;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kit_path); it != std::sregex_iterator(); ++it) {
        const std::string path = it->str();
        if (path == "tools/mgpu") continue;
        const std::string file = path.substr(0, path.find(':'));
        if (file.size() >= own.size() && file.compare(file.size() - own.size(), own.size(), own) == 0) continue;
        // Only a whole word: "my_tools/x" or "toolchecker/" is not the kit's folder.
        const auto at = static_cast<std::size_t>(it->position());
        if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_' || text[at - 1] == '/'))
            continue;
        found.push_back(path);
    }
    return found;
}

}  // namespace lesson_tests
