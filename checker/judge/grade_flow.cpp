// The order of grading: find the lessons and the submission's files, build each lesson's checker
// binary, list and run its test cases, score them against the rubric.
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "case_runner.h"
#include "gpu_probe.h"
#include "checker_build_config.h"
#include "grading.h"
#include "grading_view.h"
#include "submission_build.h"

namespace mgpu::judge {

namespace fs = std::filesystem;

namespace {

std::string join_display(const std::string& dir, const std::string& name) {
    if (dir.empty() || dir == ".") return name;
    return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// The submission folder as messages name it: relative to the current folder when inside it.
std::string display_root(const std::string& submission_dir) {
    std::error_code error;
    const fs::path here = fs::current_path(error);
    const fs::path dir = fs::absolute(submission_dir, error).lexically_normal();
    if (error) return submission_dir;
    const fs::path relative = dir.lexically_relative(here);
    if (relative.empty() || *relative.begin() == "..") return submission_dir;
    return relative.string();
}

struct Located {
    std::vector<SubmissionFile> files;
    std::vector<std::string> missing;
    std::vector<std::string> linked;   // a file, or its lesson folder, that is a symbolic link
};

// The judge reads the student's files outside the sandbox, so a link would let a submission hand in
// any file the judge can read (another checkout's solution, /etc/passwd) as its own: a link is
// refused, never followed.
bool is_link(const fs::path& path) {
    std::error_code error;
    return fs::is_symlink(fs::symlink_status(path, error));
}

// DIR/<lesson>/<file>, as in exercises/; or DIR/<file> when DIR is that lesson's folder itself.
Located locate_files(const Lesson& lesson, const GradeRequest& request, bool lesson_named) {
    Located located;
    const fs::path dir(request.submission_dir);
    const std::string shown = display_root(request.submission_dir);
    const bool dir_is_lesson = dir.filename() == lesson.id || (dir.filename().empty() && dir.parent_path().filename() == lesson.id);
    if (request.refuse_linked_folder && is_link(dir)) {
        located.linked.push_back(shown);
        return located;
    }
    for (const auto& name : lesson.student_files) {
        std::error_code error;
        const fs::path nested = dir / lesson.id / name;
        const fs::path flat = dir / name;
        const bool flat_taken = dir_is_lesson || lesson_named;
        if (is_link(dir / lesson.id)) {
            located.linked.push_back(join_display(shown, lesson.id));
        } else if (is_link(nested)) {
            located.linked.push_back(join_display(join_display(shown, lesson.id), name));
        } else if (!fs::exists(fs::symlink_status(nested, error)) && flat_taken && is_link(flat)) {
            located.linked.push_back(join_display(shown, name));
        } else if (fs::is_regular_file(nested, error)) {
            located.files.push_back({name, nested.string(), join_display(join_display(shown, lesson.id), name)});
        } else if (flat_taken && fs::is_regular_file(flat, error)) {
            located.files.push_back({name, flat.string(), join_display(shown, name)});
        } else {
            located.missing.push_back(join_display(join_display(shown, lesson.id), name));
        }
    }
    return located;
}

bool submission_has(const Lesson& lesson, const GradeRequest& request) {
    std::error_code error;
    if (fs::is_directory(fs::path(request.submission_dir) / lesson.id, error)) return true;
    for (const auto& name : lesson.student_files) {
        if (fs::is_regular_file(fs::path(request.submission_dir) / name, error)) return true;
    }
    return false;
}

// The cases a cached build listed, and which of them are race cases: {"cases": [...], "race": [...]}.
// Anything else (an older file, a torn one) reads as nothing, and the build is listed again.
bool cached_listing(const std::string& cache_entry, CaseListing* listing) {
    std::ifstream file(fs::path(cache_entry) / "cases.json");
    if (!file) return false;
    auto document = nlohmann::json::parse(file, nullptr, false);
    if (document.is_discarded() || !document.is_object() || !document.contains("cases") ||
        !document["cases"].is_array() || !document.contains("race") || !document["race"].is_array())
        return false;
    for (const auto& name : document["cases"])
        if (name.is_string()) listing->names.push_back(name.get<std::string>());
    for (const auto& name : document["race"])
        if (name.is_string()) listing->race_cases.push_back(name.get<std::string>());
    return !listing->names.empty();
}

void store_listing(const std::string& cache_entry, const CaseListing& listing) {
    const fs::path path = fs::path(cache_entry) / "cases.json";
    const fs::path temporary = fs::path(cache_entry) / ("cases.json." + std::to_string(::getpid()));
    {
        std::ofstream file(temporary);
        file << nlohmann::json{{"cases", listing.names}, {"race", listing.race_cases}}.dump(1);
    }
    std::error_code error;
    fs::rename(temporary, path, error);
}

void grade_lesson(const Lesson& lesson, const GradeRequest& request, bool lesson_named, const CaseRunSettings& run,
                  const BuildSettings& build_settings, bool on_gpu, LessonResult* result) {
    result->number = lesson.number;
    result->id = lesson.id;
    result->title = lesson.title;
    result->lesson_text = lesson.rubric.lesson_text;
    for (const auto& name : lesson.student_files) result->submission_files.push_back(name);

    Located located = locate_files(lesson, request, lesson_named);
    if (!located.linked.empty()) {
        result->outcome = LessonOutcome::NotBuilt;
        result->problem_kind = "symbolic link";
        for (const auto& path : std::set<std::string>(located.linked.begin(), located.linked.end())) {
            result->problem += (result->problem.empty() ? "" : "\n") + path +
                               " is a symbolic link, which the grader does not follow: hand in the files themselves, "
                               "in place of the link (a copy, not a link).";
        }
        return;
    }
    if (!located.missing.empty()) {
        result->outcome = LessonOutcome::NotBuilt;
        result->problem_kind = "missing file";
        for (const auto& path : located.missing) {
            result->problem += (result->problem.empty() ? "" : "\n") + path +
                               " was not found. Hand in the file under this name, in the same folders as exercises/.";
        }
        return;
    }
    result->submission_files.clear();
    for (const auto& file : located.files) result->submission_files.push_back(file.display);

    std::error_code absent;
    if (on_gpu && !fs::exists(lesson.cuda_build_manifest, absent)) {
        throw KitError("lesson " + std::to_string(lesson.number) +
                       " has no checker for real GPUs in this build: either the lesson's checker runs on the simulator "
                       "only (checker/README.md says which), or the kit was configured without nvcc or without CUPTI "
                       "(CUDA Toolkit 12 or 13). Grade with --backend sim, or install the toolkit and configure the "
                       "build again.");
    }
    if (lesson.interface.empty()) {
        throw KitError("lesson " + std::to_string(lesson.number) + " has no " + lesson.interface_file +
                       " (the signatures of the functions its header declares): build the kit again "
                       "(tools/mgpu check does).");
    }
    const LessonBuild build = load_lesson_build(on_gpu ? lesson.cuda_build_manifest : lesson.build_manifest);
    BuiltChecker built = build_checker(lesson, build, located.files, build_settings);
    if (!built.ok) {
        result->outcome = LessonOutcome::NotBuilt;
        result->problem_kind = built.problem_kind;
        result->problem = built.problem;
        return;
    }
    result->build_cached = built.from_cache;
    CaseRunSettings lesson_run = run;
    lesson_run.toolchain_dirs = toolchain_dirs(build);

    CaseListing cached;
    if (!cached_listing(built.cache_entry, &cached)) {
        CaseListing listing = list_cases(built.binary, lesson_run);
        if (!listing.ok) {
            if (listing.problem.rfind("internal:", 0) == 0) throw KitError(listing.problem);
            result->outcome = LessonOutcome::NotBuilt;
            result->problem_kind = "does not start";
            result->problem = listing.problem;
            return;
        }
        cached = listing;
        store_listing(built.cache_entry, cached);
    }
    const std::vector<std::string>& names = cached.names;
    lesson_run.race_binary = built.race_binary;
    lesson_run.race_cases.insert(cached.race_cases.begin(), cached.race_cases.end());
    for (const auto& name : names) {
        if (lesson.rubric.find(criterion_of(name)) == nullptr) {
            throw KitError("test case \"" + name + "\" of lesson " + lesson.id +
                           " does not start with a criterion of its rubric.json followed by \": \"");
        }
    }
    for (const auto& criterion : lesson.rubric.criteria) {
        bool any = false;
        for (const auto& name : names) any = any || criterion_of(name) == criterion.name;
        if (!any) throw KitError("criterion \"" + criterion.name + "\" of lesson " + lesson.id + " has no test case");
    }

    // The timelines of this lesson's failed cases, in a folder of the lesson, this run's only.
    if (!run.timeline_dir.empty()) {
        lesson_run.timeline_dir = (fs::path(run.timeline_dir) / lesson.id).string();
        std::error_code ignored;
        fs::remove_all(lesson_run.timeline_dir, ignored);
    }
    result->cases = run_cases(built.binary, names, lesson_run);
    for (auto& test : result->cases) {
        test.criterion = criterion_of(test.name);
        if (test.reason.rfind("internal:", 0) == 0) throw KitError(test.reason);
    }
}

std::uint64_t fresh_seed() {
    std::string nonce = new_nonce();
    std::uint64_t seed = std::stoull(nonce.substr(0, 12), nullptr, 16) % 1000000000ULL;
    return seed == 0 ? 1 : seed;
}

}  // namespace

GradeReport grade_submission(const GradeRequest& request) {
    const auto start = std::chrono::steady_clock::now();
    GradeReport report;
    report.backend = request.backend;
    report.seed = request.seed != 0 ? request.seed : fresh_seed();
    auto finish = [&] {
        report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return report;
    };
    // "auto" grades on real GPUs where the driver shows one, else on the simulated machine;
    // "cuda" insists on a GPU and says plainly when there is none.
    GpuProbe gpu;
    if (request.backend == "auto" || request.backend == "cuda") gpu = probe_gpu();
    if (request.backend == "auto") report.backend = gpu.usable ? "cuda" : "sim";
    if (report.backend == "cuda" && !gpu.usable) {
        report.kit_fault = "the 'cuda' backend needs an NVIDIA GPU, and there is no GPU here: " + gpu.reason +
                           ". Grade on the simulated machine instead: --backend sim (or auto, which picks it).";
        return finish();
    }
    if (report.backend != "sim" && report.backend != "cuda") {
        report.kit_fault = "there is no backend '" + request.backend + "': use sim, cuda or auto.";
        return finish();
    }
    const bool on_gpu = report.backend == "cuda";

    std::vector<Lesson> lessons;
    LessonPaths paths;
    try {
        paths.kit_root = fs::absolute(request.kit_root.empty() ? MGPU_CHECKER_SOURCE_ROOT : request.kit_root).string();
        paths.lessons_dir = request.lessons_dir.empty() ? (fs::path(paths.kit_root) / "checker" / "lessons").string()
                                                         : fs::absolute(request.lessons_dir).string();
        paths.lessons_build_dir = request.lessons_build_dir.empty()
                                      ? (fs::path(MGPU_CHECKER_BUILD_ROOT) / "checker" / "lessons").string()
                                      : fs::absolute(request.lessons_build_dir).string();
        lessons = load_lessons(paths);
    } catch (const std::exception& error) {
        report.kit_fault = error.what();
        return finish();
    }

    std::vector<const Lesson*> chosen;
    if (request.lesson != 0) {
        for (const auto& lesson : lessons) {
            if (lesson.number == request.lesson) chosen.push_back(&lesson);
        }
        if (chosen.empty()) {
            std::string known;
            for (const auto& lesson : lessons) known += (known.empty() ? "" : ", ") + std::to_string(lesson.number);
            report.kit_fault = "there is no checker for lesson " + std::to_string(request.lesson) +
                               " (lessons with a checker: " + known + ")";
            return finish();
        }
    } else {
        for (const auto& lesson : lessons) {
            if (submission_has(lesson, request)) chosen.push_back(&lesson);
        }
        if (chosen.empty()) {
            for (const auto& lesson : lessons) chosen.push_back(&lesson);   // each will say what is missing
        }
    }

    const Sandbox& sandbox = available_sandbox(request.sandbox);
    report.sandbox = sandbox.describe();
    CaseRunSettings run;
    run.sandbox = &sandbox;
    run.cpu_seconds = request.case_cpu_seconds;
    run.blocked_seconds = request.case_blocked_seconds;
    run.wall_seconds = request.case_wall_seconds;
    run.memory_limit_bytes = request.memory_limit_bytes;
    run.output_limit_bytes = request.output_limit_bytes;
    run.seed = report.seed;
    run.topology = request.topology;
    run.timeline_dir = request.timeline_dir;
    run.jobs = request.jobs > 0 ? request.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (on_gpu) {
        run.device_files = gpu.device_files;
        // Cases share the GPUs: one at a time unless asked, so that timings are the case's own.
        if (request.jobs <= 0) run.jobs = 1;
    }

    BuildSettings build_settings;
    build_settings.sandbox = &sandbox;
    build_settings.cache_dir = request.cache_dir.empty()
                                   ? (fs::path(MGPU_CHECKER_BUILD_ROOT) / "checker-cache").string()
                                   : fs::absolute(request.cache_dir).string();
    build_settings.compile_cpu_seconds = request.compile_cpu_seconds;
    GradingViewFolders folders;
    folders.kit_root = paths.kit_root;
    folders.build_root = MGPU_CHECKER_BUILD_ROOT;
    folders.lessons_dir = paths.lessons_dir;
    folders.lessons_build_dir = paths.lessons_build_dir;
    folders.cache_dir = build_settings.cache_dir;
    folders.submission_dir = request.submission_dir;
    const GradingView view = grading_view(folders);
    build_settings.hidden_dirs = view.hidden_dirs;
    build_settings.hidden_again = view.hidden_again;
    run.hidden_dirs = view.hidden_dirs;
    run.hidden_again = view.hidden_again;

    for (const Lesson* lesson : chosen) {
        LessonResult result;
        const auto lesson_start = std::chrono::steady_clock::now();
        try {
            run.scratch_dir = build_settings.cache_dir;
            std::error_code error;
            fs::create_directories(run.scratch_dir, error);
            grade_lesson(*lesson, request, request.lesson != 0, run, build_settings, on_gpu, &result);
        } catch (const std::exception& error) {
            result.outcome = LessonOutcome::KitFault;
            result.problem_kind = "internal error";
            result.problem = error.what();
            result.cases.clear();
        }
        if (result.outcome != LessonOutcome::Graded) result.cases.clear();
        score_lesson(lesson->rubric, &result);
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - lesson_start).count();
        report.lessons.push_back(std::move(result));
    }
    return finish();
}

}  // namespace mgpu::judge
