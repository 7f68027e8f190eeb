#include "class_grading.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "exit_codes.h"
#include "grade.h"
#include "grading.h"
#include "lesson_catalog.h"
#include "reports.h"
#include "sha256.h"

namespace mgpu::cli {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Bumped when the cache entry's meaning changes, so old entries are graded again.
constexpr const char* kGradebookCacheFormat = "mgpu-grade-class-1";
constexpr const char* kCacheFile = "grade-cache.json";

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

// Writes through a temporary file, so a reader (or a grading stopped half-way) never leaves half a file.
void write_text(const fs::path& path, const std::string& text) {
    const fs::path temporary = path.string() + ".partial-" + std::to_string(::getpid());
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        file << text;
        if (!file) throw SetupError("cannot write " + path.string() + ": check that the folder is writable");
    }
    std::error_code error;
    fs::rename(temporary, path, error);
    if (error) throw SetupError("cannot write " + path.string() + ": " + error.message());
}

void add_file_stamp(seal::Sha256& hash, const fs::path& path) {
    std::error_code error;
    const auto size = fs::file_size(path, error);
    const auto time = fs::last_write_time(path, error).time_since_epoch().count();
    hash.update(path.string() + "|" + std::to_string(error ? 0 : size) + "|" + std::to_string(error ? 0 : time) + "\n");
}

// What makes the kit grade differently: this program (it holds the judge), each lesson's
// description, rubric and checker build (its manifest and the archives it links). A rebuilt kit
// regrades everyone; an untouched one serves unchanged students from the cache.
std::string kit_fingerprint(const std::vector<const judge::Lesson*>& lessons, bool on_gpu) {
    seal::Sha256 hash;
    add_file_stamp(hash, fs::read_symlink("/proc/self/exe"));
    for (const judge::Lesson* lesson : lessons) {
        hash.update(read_text(fs::path(lesson->source_dir) / "lesson.json"));
        hash.update(read_text(fs::path(lesson->source_dir) / "rubric.json"));
        const std::string manifest = on_gpu ? lesson->cuda_build_manifest : lesson->build_manifest;
        std::error_code error;
        if (!fs::exists(manifest, error)) continue;
        try {
            const judge::LessonBuild build = judge::load_lesson_build(manifest);
            hash.update(build.manifest_text);
            for (const auto& archive : build.link_archives) add_file_stamp(hash, archive);
            if (!build.cu2cpp.empty()) add_file_stamp(hash, build.cu2cpp);
        } catch (const std::exception&) {
            // The judge reports a broken manifest as the kit's fault, for each student.
        }
    }
    return hash.hex_digest();
}

struct Grader {
    const Kit& kit;
    const ClassGrading& settings;
    std::vector<const judge::Lesson*> lessons;
    std::string kit_version;
    int cases_at_once = 1;

    std::string cache_key(const Student& student) const {
        std::string lesson_list;
        for (const judge::Lesson* lesson : lessons) lesson_list += std::to_string(lesson->number) + ",";
        return seal::sha256_hex(std::string(kGradebookCacheFormat) + "|files|" + folder_content_hash(student.folder) +
                                 "|lessons|" + lesson_list + "|seed|" + std::to_string(settings.seed) + "|backend|" +
                                 settings.backend + "|topology|" + settings.topology + "|kit|" + kit_version);
    }

    std::optional<std::vector<GradeRow>> cached_rows(const fs::path& folder, const std::string& key) const {
        std::error_code error;
        if (!fs::exists(folder / "results.json", error) || !fs::exists(folder / "junit.xml", error)) return std::nullopt;
        auto document = nlohmann::json::parse(read_text(folder / kCacheFile), nullptr, false);
        if (document.is_discarded() || !document.is_object() || document.value("key", "") != key) return std::nullopt;
        std::vector<GradeRow> rows;
        for (const auto& entry : document.value("rows", nlohmann::json::array())) {
            auto row = row_from_json(entry);
            if (!row) return std::nullopt;
            rows.push_back(*row);
        }
        if (rows.size() != lessons.size()) return std::nullopt;
        return rows;
    }

    judge::LessonResult grade_lesson(const Student& student, const judge::Lesson& lesson, judge::GradeReport* whole) const {
        judge::GradeRequest request;
        request.kit_root = kit.root.string();
        request.submission_dir = fs::absolute(student.folder).lexically_normal().string();
        // A student folder that links elsewhere would grade whatever it names (another student's, a solution).
        request.refuse_linked_folder = true;
        request.lesson = lesson.number;
        request.topology = settings.topology;
        request.backend = settings.backend;
        request.quiet = true;
        request.jobs = cases_at_once;
        request.seed = settings.seed;
        request.cache_dir = (settings.build_cache.empty() ? kit.build / "checker-cache" : settings.build_cache).string();
        request.lessons_build_dir = (kit.build / "checker" / "lessons").string();
        judge::GradeReport report = judge::grade_submission(request);
        whole->backend = report.backend;
        whole->sandbox = report.sandbox;
        whole->seconds += report.seconds;
        if (report.kit_fault.empty() && report.lessons.size() == 1) return report.lessons.front();
        judge::LessonResult fault;
        fault.number = lesson.number;
        fault.id = lesson.id;
        fault.title = lesson.title;
        fault.lesson_text = lesson.rubric.lesson_text;
        fault.outcome = judge::LessonOutcome::KitFault;
        fault.problem_kind = "internal error";
        fault.problem = report.kit_fault.empty() ? "the judge returned no result for this lesson" : report.kit_fault;
        judge::score_lesson(lesson.rubric, &fault);
        return fault;
    }

    static GradeRow row_of(const Student& student, const judge::LessonResult& lesson) {
        GradeRow row;
        row.student = student.name;
        row.lesson = lesson.number;
        row.score = lesson.score;
        row.max_score = lesson.max_score;
        bool unfinished = false;
        for (const auto& test : lesson.cases) unfinished = unfinished || test.status == judge::CaseStatus::Unfinished;
        row.status = lesson.outcome == judge::LessonOutcome::NotBuilt                      ? "not built"
                     : lesson.outcome == judge::LessonOutcome::KitFault || unfinished     ? "kit error"
                                                                                          : "graded";
        for (const auto& criterion : lesson.criteria) row.criteria.emplace_back(criterion.criterion.name, criterion.earned);
        return row;
    }

    StudentOutcome grade(const Student& student) const {
        const auto start = Clock::now();
        StudentOutcome outcome{student, {}, false, 0};
        const fs::path folder = settings.out_dir / student.name;
        std::string key;
        try {
            key = cache_key(student);
            if (settings.use_gradebook_cache) {
                if (auto rows = cached_rows(folder, key)) {
                    outcome.rows = *rows;
                    outcome.from_cache = true;
                    return outcome;
                }
            }
            judge::GradeReport report;
            report.seed = settings.seed;
            for (const judge::Lesson* lesson : lessons) {
                report.lessons.push_back(grade_lesson(student, *lesson, &report));
                outcome.rows.push_back(row_of(student, report.lessons.back()));
            }
            std::error_code error;
            fs::create_directories(folder, error);
            if (error) throw SetupError("cannot create " + folder.string() + ": " + error.message());
            write_text(folder / "results.json", judge::gradescope_json(report));
            write_text(folder / "junit.xml", judge::junit_xml(report));
            write_text(folder / "report.txt", judge::terminal_report(report, false, false, true));
            // A kit error is never cached: the next run grades that student again.
            const bool trusted = std::none_of(outcome.rows.begin(), outcome.rows.end(),
                                              [](const GradeRow& row) { return row.kit_error(); });
            nlohmann::json rows = nlohmann::json::array();
            for (const auto& row : outcome.rows) rows.push_back(row_to_json(row));
            if (trusted) write_text(folder / kCacheFile, nlohmann::json{{"key", key}, {"rows", rows}}.dump(1) + "\n");
            else fs::remove(folder / kCacheFile, error);
        } catch (const std::exception& error) {
            outcome.rows.clear();
            for (const judge::Lesson* lesson : lessons) {
                GradeRow row;
                row.student = student.name;
                row.lesson = lesson->number;
                row.max_score = lesson->rubric.total_points();
                row.status = "kit error";
                outcome.rows.push_back(row);
            }
            std::lock_guard lock(output_mutex());
            std::cerr << "grade-class: " << student.name << " could not be graded: " << error.what() << "\n";
        }
        outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return outcome;
    }

    static std::mutex& output_mutex() {
        static std::mutex mutex;
        return mutex;
    }
};

std::string progress_line(const StudentOutcome& outcome, std::size_t done, std::size_t total) {
    std::ostringstream line;
    line << "grade-class: [" << done << "/" << total << "] " << outcome.student.name << ":";
    for (const auto& row : outcome.rows) {
        line << " lesson " << row.lesson << " " << csv_points(row.score) << "/" << csv_points(row.max_score);
        if (row.status != "graded") line << " (" << row.status << ")";
    }
    if (outcome.from_cache) line << ", from the cache";
    else {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f", outcome.seconds);
        line << ", graded in " << seconds << " s";
    }
    return line.str();
}

}  // namespace

int ClassResult::graded_now() const {
    return static_cast<int>(std::count_if(students.begin(), students.end(), [](const auto& s) { return !s.from_cache; }));
}

int ClassResult::from_cache() const { return static_cast<int>(students.size()) - graded_now(); }

bool ClassResult::any_kit_error() const {
    for (const auto& student : students)
        for (const auto& row : student.rows)
            if (row.kit_error()) return true;
    return false;
}

ClassResult grade_class(const Kit& kit, const ClassGrading& settings) {
    const auto start = Clock::now();
    std::error_code error;
    if (!fs::is_directory(settings.class_dir, error))
        throw UsageError("there is no class folder '" + settings.class_dir.string() + "'");

    judge::LessonPaths paths;
    paths.kit_root = kit.root.string();
    paths.lessons_dir = (kit.root / "checker" / "lessons").string();
    paths.lessons_build_dir = (kit.build / "checker" / "lessons").string();
    std::vector<judge::Lesson> catalog;
    try {
        catalog = judge::load_lessons(paths);
    } catch (const std::exception& fault) {
        throw SetupError(std::string("the kit's lessons cannot be read: ") + fault.what());
    }
    Grader grader{kit, settings, {}, {}, 1};
    for (const auto& lesson : catalog) {
        if (settings.lessons.empty() ||
            std::find(settings.lessons.begin(), settings.lessons.end(), lesson.number) != settings.lessons.end())
            grader.lessons.push_back(&lesson);
    }
    for (int number : settings.lessons) {
        if (std::none_of(catalog.begin(), catalog.end(), [&](const auto& lesson) { return lesson.number == number; })) {
            std::string known;
            for (const auto& lesson : catalog) known += (known.empty() ? "" : ", ") + std::to_string(lesson.number);
            throw UsageError("there is no checker for lesson " + std::to_string(number) + " (lessons: " + known + ")");
        }
    }
    grader.kit_version = kit_fingerprint(grader.lessons, settings.backend == "cuda");

    ClassResult result;
    for (const judge::Lesson* lesson : grader.lessons) {
        LessonColumns columns{lesson->number, {}};
        for (const auto& criterion : lesson->rubric.criteria) columns.criteria.push_back(criterion.name);
        result.columns.push_back(columns);
    }
    fs::create_directories(settings.out_dir, error);
    if (error) throw SetupError("cannot create the output folder " + settings.out_dir.string() + ": " + error.message());
    const std::vector<Student> roster =
        chunk_of(list_students(settings.class_dir, settings.out_dir), settings.part, settings.parts);

    // Students side by side, each with its cases one at a time: a student's checker build is one
    // compiler process, so grading students in parallel keeps every core busy through the builds
    // as well as the cases, where parallel cases alone leave cores idle during each build.
    const int jobs = settings.jobs > 0 ? settings.jobs
                     : settings.backend == "cuda" ? 1
                                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    result.students_at_once = std::max(1, std::min<int>(jobs, static_cast<int>(roster.size())));
    result.cases_at_once = std::max(1, jobs / result.students_at_once);
    grader.cases_at_once = result.cases_at_once;

    result.students.resize(roster.size());
    std::atomic<std::size_t> next{0};
    std::size_t done = 0;
    auto work = [&] {
        for (std::size_t index = next++; index < roster.size(); index = next++) {
            StudentOutcome outcome = grader.grade(roster[index]);
            std::lock_guard lock(Grader::output_mutex());
            ++done;
            if (settings.show_progress) std::cerr << progress_line(outcome, done, roster.size()) << "\n";
            result.students[index] = std::move(outcome);
        }
    };
    std::vector<std::thread> workers;
    for (int i = 1; i < result.students_at_once; ++i) workers.emplace_back(work);
    work();
    for (auto& worker : workers) worker.join();

    std::vector<GradeRow> rows;
    for (const auto& student : result.students) rows.insert(rows.end(), student.rows.begin(), student.rows.end());
    result.csv_path = settings.out_dir / (settings.parts > 1 ? "grades-part-" + std::to_string(settings.part) + "-of-" +
                                                                   std::to_string(settings.parts) + ".csv"
                                                             : std::string("grades.csv"));
    write_text(result.csv_path, gradebook_csv(rows, result.columns));
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
}

std::string class_summary(const ClassResult& result) {
    std::size_t width = 7;
    for (const auto& student : result.students) width = std::max(width, student.student.name.size());
    auto pad = [](std::string text, std::size_t size) {
        text.resize(std::max(size, text.size()), ' ');
        return text;
    };
    std::ostringstream out;
    out << pad("student", width + 2) << pad("lesson", 8) << pad("score", 16) << "status\n";
    int graded = 0, not_built = 0, kit_errors = 0;
    for (const auto& student : result.students) {
        for (const auto& row : student.rows) {
            out << pad(student.student.name, width + 2) << pad(std::to_string(row.lesson), 8)
                << pad(csv_points(row.score) + " / " + csv_points(row.max_score), 16) << row.status << "\n";
            (row.status == "graded" ? graded : row.status == "not built" ? not_built : kit_errors)++;
        }
    }
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f", result.seconds);
    out << result.students.size() << " students: " << graded << " graded, " << not_built << " not built, " << kit_errors
        << " kit errors; " << result.graded_now() << " graded now, " << result.from_cache() << " from the cache, in "
        << seconds << " s (" << result.students_at_once << (result.students_at_once == 1 ? " student" : " students")
        << " at once, " << result.cases_at_once << (result.cases_at_once == 1 ? " case" : " cases") << " each)\n";
    out << "Gradebook: " << result.csv_path.string() << "\n";
    return out.str();
}

}  // namespace mgpu::cli
