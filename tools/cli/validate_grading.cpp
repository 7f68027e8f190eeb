// Part c: the checker's known answers on this machine. Each lesson's reference solution must
// earn every point its runnable checks give, the skeleton close to none, and each generated
// mutant (the solution broken in one way, checker/lessons/<lesson>/mutants/manifest.json) must
// lose points in exactly the criterion its manifest names. Grading goes through the judge the
// `grade` command uses, with --backend cuda on GPUs (sim with --real-side sim).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "kit_config.h"
#include "lessons.h"
#include "validate_parts.h"

#if MGPU_HAVE_CHECKER
#include "grade.h"
#include "grading.h"
#include "lesson_catalog.h"
#endif

namespace mgpu::cli {

namespace fs = std::filesystem;

#if MGPU_HAVE_CHECKER

namespace {

// A skeleton scores "near zero" when it keeps at most this share of the runnable points.
constexpr double kSkeletonShare = 0.10;

struct Mutant {
    std::string file, criterion, description;
};

std::vector<Mutant> read_manifest(const fs::path& path, std::string* source) {
    std::ifstream in(path);
    if (!in) return {};
    const auto manifest = nlohmann::json::parse(in, nullptr, false);
    if (manifest.is_discarded() || !manifest.contains("mutants")) return {};
    *source = manifest.value("source", "");
    std::vector<Mutant> mutants;
    for (const auto& entry : manifest["mutants"])
        mutants.push_back({entry.value("file", ""), entry.value("criterion", ""), entry.value("description", "")});
    return mutants;
}

// --quick keeps the first mutant of each criterion: every criterion is still shown to catch one.
std::vector<Mutant> first_of_each_criterion(const std::vector<Mutant>& mutants) {
    std::vector<Mutant> kept;
    std::set<std::string> seen;
    for (const auto& mutant : mutants)
        if (seen.insert(mutant.criterion).second) kept.push_back(mutant);
    return kept;
}

std::string number(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

judge::LessonResult grade(const ValidateRun& run, const judge::Lesson& lesson, const fs::path& submission) {
    judge::GradeRequest request;
    request.kit_root = run.kit.root.string();
    request.submission_dir = submission.string();
    request.lesson = lesson.number;
    request.backend = run.real_is_sim ? "sim" : "cuda";
    request.quiet = true;
    request.seed = run.seed;
    request.cache_dir = (run.kit.build / "checker-cache").string();
    request.lessons_build_dir = (run.kit.build / "checker" / "lessons").string();
    judge::GradeReport report = judge::grade_submission(request);
    if (!report.kit_fault.empty() || report.lessons.empty()) {
        judge::LessonResult failed;
        failed.outcome = judge::LessonOutcome::KitFault;
        failed.problem = report.kit_fault.empty() ? "the judge graded nothing" : report.kit_fault;
        return failed;
    }
    return report.lessons.front();
}

int cases_with(const judge::LessonResult& result, judge::CaseStatus status) {
    return static_cast<int>(std::count_if(result.cases.begin(), result.cases.end(),
                                          [&](const judge::CaseResult& test) { return test.status == status; }));
}

int failed_cases(const judge::LessonResult& result) {
    return static_cast<int>(std::count_if(result.cases.begin(), result.cases.end(),
                                          [](const judge::CaseResult& test) { return judge::counts_as_failed(test.status); }));
}

// The different reasons cases of `criterion` ("" = any) were skipped, joined for a report line.
std::string skip_reasons(const judge::LessonResult& result, const std::string& criterion) {
    std::set<std::string> reasons;
    for (const auto& test : result.cases)
        if (test.status == judge::CaseStatus::Skipped && (criterion.empty() || test.criterion == criterion))
            reasons.insert(test.reason);
    std::string text;
    for (const auto& reason : reasons) text += (text.empty() ? "" : "; ") + reason;
    return text;
}

// The case names and reasons are the checker's own words, quoted as they are.
Words tally(const judge::LessonResult& result) {
    Words text = say(N_("{0} / {1} on runnable checks, {2} passed, {3} failed"), number(result.score),
                     number(result.max_score), cases_with(result, judge::CaseStatus::Passed), failed_cases(result));
    std::string failed;
    for (const auto& test : result.cases)
        if (judge::counts_as_failed(test.status))
            failed += (failed.empty() ? "" : "; ") + test.name + (test.reason.empty() ? "" : " (" + test.reason + ")");
    if (!failed.empty() && failed_cases(result) <= 3) text += " [" + failed + "]";
    const int skipped = cases_with(result, judge::CaseStatus::Skipped);
    if (skipped > 0) text += say(N_(", {0} skipped ({1})"), skipped, skip_reasons(result, ""));
    return text;
}

// Why a lesson was not graded, in one line.
Words not_graded(const judge::LessonResult& result) {
    std::string problem = result.problem.substr(0, result.problem.find('\n'));
    return (result.problem_kind.empty() ? say(N_("not graded")) : Words(result.problem_kind)) + ": " + problem;
}

// Grades the lesson's folder under `kit_folder` (solutions or exercises). Reports the lesson as not
// testable when the kit has no such folder and as differing when it was not graded, `expected`
// saying what should have happened; the result only when it was graded.
std::optional<judge::LessonResult> grade_lesson_folder(ValidationReport& report, const ValidateRun& run,
                                                       const judge::Lesson& lesson, const std::string& kit_folder,
                                                       const Words& what, const Words& expected) {
    const auto folder = lesson_folder(run.kit.root / kit_folder, lesson.number);
    if (!folder) {
        report.verdict(Verdict::NotTestable, what, say(N_("the kit has no {}/ folder for this lesson"), kit_folder));
        return std::nullopt;
    }
    // Graded from a copy under the work folder, as a student's folder would be: the grading sandbox
    // hides solutions/ from everything it runs, the compiler included.
    const fs::path copy = run.work_dir / "folders" / kit_folder / folder->filename();
    std::error_code ignored;
    fs::remove_all(copy, ignored);
    fs::create_directories(copy);
    fs::copy(*folder, copy, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    auto result = grade(run, lesson, copy);
    if (result.outcome != judge::LessonOutcome::Graded) {
        report.verdict(Verdict::Differs, what, expected + not_graded(result));
        return std::nullopt;
    }
    return result;
}

void check_solution(ValidationReport& report, const ValidateRun& run, const judge::Lesson& lesson) {
    const Words what = say(N_("lesson {} reference solution"), lesson.number);
    const auto result = grade_lesson_folder(report, run, lesson, "solutions", what, Words());
    if (!result) return;
    const bool full = failed_cases(*result) == 0 && cases_with(*result, judge::CaseStatus::Passed) > 0;
    report.verdict(full ? Verdict::Agrees : Verdict::Differs, what + say(N_(" (full marks expected)")), tally(*result));
}

void check_skeleton(ValidationReport& report, const ValidateRun& run, const judge::Lesson& lesson) {
    const Words what = say(N_("lesson {} skeleton"), lesson.number);
    const auto result = grade_lesson_folder(report, run, lesson, "exercises", what,
                                            say(N_("the skeleton should build and score near zero; ")));
    if (!result) return;
    const bool near_zero = result->score <= kSkeletonShare * result->max_score;
    report.verdict(near_zero ? Verdict::Agrees : Verdict::Differs,
                   what + say(N_(" (at most {} expected)"), number(100 * kSkeletonShare) + "%"), tally(*result));
}

void check_mutant(ValidationReport& report, const ValidateRun& run, const judge::Lesson& lesson,
                  const std::string& source, const Mutant& mutant) {
    // A criterion's name is the rubric's English, which the catalog translates (as check's table does).
    const Words criterion_name(mutant.criterion, tr(mutant.criterion));
    const Words what = say(N_("lesson {0} mutant {1} (must lose \"{2}\" only)"), lesson.number, mutant.file, criterion_name);
    const fs::path generated = run.kit.build / "checker" / "lessons" / lesson.id / "mutants" / mutant.file;
    if (!fs::exists(generated)) {
        report.verdict(Verdict::NotBuilt, what,
                       say(N_("{0} was not generated (ninja -C {1} builds it)"), generated.string(), run.kit.build.string()));
        return;
    }
    // The judge finds a lesson's file under <submission>/<lesson id>/<file name the lesson asks for>.
    const fs::path submission = run.work_dir / "mutants" / fs::path(mutant.file).stem();
    fs::create_directories(submission / lesson.id);
    fs::copy_file(generated, submission / lesson.id / source, fs::copy_options::overwrite_existing);
    const auto result = grade(run, lesson, submission);
    if (result.outcome != judge::LessonOutcome::Graded) {
        report.verdict(Verdict::Differs, what, say(N_("a mutant should build; {}"), not_graded(result)));
        return;
    }
    const judge::CriterionResult* target = nullptr;
    Words others_lost;
    for (const auto& criterion : result.criteria) {
        if (criterion.criterion.name == mutant.criterion) target = &criterion;
        else if (criterion.failed > 0)
            others_lost += (others_lost.empty() ? "" : ", ") + Words(criterion.criterion.name, tr(criterion.criterion.name));
    }
    if (target == nullptr) {
        report.verdict(Verdict::Differs, what, say(N_("the lesson's rubric has no criterion \"{}\""), mutant.criterion));
        return;
    }
    const Words counts =
        say(N_("{0} of its {1} runnable cases failed"), target->failed, target->passed + target->failed);
    if (target->passed + target->failed == 0) {
        report.verdict(Verdict::NotTestable, what,
                       say(N_("every case of \"{0}\" was skipped here: {1}"), criterion_name,
                           skip_reasons(result, mutant.criterion)));
    } else if (!others_lost.empty()) {
        report.verdict(Verdict::Differs, what, counts + say(N_(", but it also lost points in: {}"), others_lost));
    } else if (target->failed > 0) {
        report.verdict(Verdict::Agrees, what, counts);
    } else if (target->skipped > 0) {
        report.verdict(Verdict::NotTestable, what,
                       say(N_("the cases this machine can run do not catch it; the ones that would were skipped: {}"),
                           skip_reasons(result, mutant.criterion)));
    } else {
        report.verdict(Verdict::Differs, what,
                       say(N_("it kept every point: no case of \"{}\" caught it"), criterion_name));
    }
}

}  // namespace

void grade_known_answers(ValidationReport& report, const ValidateRun& run) {
    report.section(say(N_("Grading with --backend {}: solutions, skeletons and mutants"), run.real_is_sim ? "sim" : "cuda"));
    std::vector<judge::Lesson> lessons;
    try {
        judge::LessonPaths paths;
        paths.kit_root = run.kit.root.string();
        paths.lessons_dir = (run.kit.root / "checker" / "lessons").string();
        paths.lessons_build_dir = (run.kit.build / "checker" / "lessons").string();
        lessons = judge::load_lessons(paths);
    } catch (const std::exception& error) {
        report.verdict(Verdict::Differs, say(N_("the checker's lessons")), error.what());
        return;
    }
    report.line(run.quick ? say(N_("Seed of the random inputs: {0}. Lessons with a checker: {1}; --quick grades the first "
                                   "mutant of each criterion."),
                                run.seed, lessons.size())
                          : say(N_("Seed of the random inputs: {0}. Lessons with a checker: {1}."), run.seed, lessons.size()));
    if (!run.lessons.empty()) {
        std::erase_if(lessons, [&](const judge::Lesson& lesson) { return !run.lessons.count(lesson.number); });
        std::string chosen;
        for (int number : run.lessons) chosen += (chosen.empty() ? "" : ", ") + std::to_string(number);
        report.line(say(N_("Only these lessons are graded (--lesson): {}."), chosen));
        if (lessons.empty())
            report.verdict(Verdict::Differs, "--lesson", say(N_("no lesson with a checker has the number {}"), chosen));
    }
    for (const auto& lesson : lessons) {
        report.line(say(N_("Lesson {0} ({1}):"), lesson.number, Words(lesson.title, tr(lesson.title))));
        check_solution(report, run, lesson);
        check_skeleton(report, run, lesson);
        std::string source;
        const fs::path manifest = run.kit.root / "checker" / "lessons" / lesson.id / "mutants" / "manifest.json";
        std::vector<Mutant> mutants = read_manifest(manifest, &source);
        if (mutants.empty()) {
            report.verdict(Verdict::NotTestable, say(N_("lesson {} mutants"), lesson.number),
                           say(N_("no mutants are listed in {}"), manifest.string()));
            continue;
        }
        if (source.empty() && !lesson.student_files.empty()) source = lesson.student_files.front();
        if (run.quick) mutants = first_of_each_criterion(mutants);
        for (const auto& mutant : mutants) check_mutant(report, run, lesson, source, mutant);
    }
}

#else

void grade_known_answers(ValidationReport& report, const ValidateRun&) {
    report.section(say(N_("Grading: solutions, skeletons and mutants")));
    report.verdict(Verdict::NotBuilt, say(N_("grading")), say(N_("the checker is not part of this build of the kit")));
}

#endif

}  // namespace mgpu::cli
