// The real-GPU backend where CI runs: nvcc and CUPTI are installed, no GPU is. The solution must
// still build into a checker binary for real GPUs (nvcc on the student's file, the suite compiled
// against the CUDA Toolkit's headers, CUPTI and real_machine linked); `auto` must pick the
// simulator and `cuda` must stop with exit code 4 and say that there is no GPU.
#include <doctest/doctest.h>

#include <filesystem>

#include "gpu_probe.h"
#include "grading.h"
#include "lesson_grading_support.h"
#include "process_runner.h"
#include "submission_build.h"

namespace {

namespace fs = std::filesystem;
using namespace mgpu::judge;

const Lesson& lesson_numbered(const std::vector<Lesson>& lessons, int number) {
    for (const auto& lesson : lessons) {
        if (lesson.number == number) return lesson;
    }
    FAIL("lesson " << number << " is not in the catalog");
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("cuda backend: each lesson's reference solution builds into a real-GPU checker with nvcc and CUPTI") {
    LessonPaths paths{MGPU_KIT_ROOT, std::string(MGPU_KIT_ROOT) + "/checker/lessons", MGPU_LESSONS_BUILD};
    const auto lessons = load_lessons(paths);
    int built_lessons = 0;
    for (const lesson_tests::TestedLesson& tested : lesson_tests::tested_lessons()) {
        CAPTURE(tested.id);
        const Lesson& lesson = lesson_numbered(lessons, tested.number);
        // Lesson 4's real-GPU suite needs the real NCCL as well; the others need nvcc and CUPTI only.
        if (tested.number == 4 && !fs::exists(lesson.cuda_build_manifest)) continue;
        REQUIRE(fs::exists(lesson.cuda_build_manifest));
        const LessonBuild build = load_lesson_build(lesson.cuda_build_manifest);
        REQUIRE_FALSE(build.nvcc.empty());
        // The student's file sees the toolkit's headers only, never the simulator's cuda_runtime.h.
        for (const auto& dir : build.include_dirs) CHECK_FALSE(fs::exists(fs::path(dir) / "mgpu" / "sim" / "control.h"));

        const std::string dir = lesson_tests::write_submission(tested, "cuda-backend-solution",
                                                               lesson_tests::solution_source(tested));
        const std::string file = dir + "/" + tested.id + "/" + tested.student_file;
        BuildSettings settings;
        settings.cache_dir = std::string(MGPU_CHECKER_TEST_CACHE) + "/cuda-backend";
        settings.sandbox = &available_sandbox(false);
        const BuiltChecker built = build_checker(lesson, build, {{tested.student_file, file, tested.student_file}}, settings);
        INFO(built.problem_kind << ": " << built.problem);
        REQUIRE(built.ok);

        // The binary starts and lists the suite without touching a GPU: every criterion has cases.
        ProcessSpec list;
        list.argv = {built.binary, "-ltc"};
        list.environment = {"PATH=/usr/bin:/bin"};
        list.limits.cpu_seconds = 30;
        const ProcessOutcome listed = run_process(list);
        INFO(listed.output);
        CHECK(listed.exited);
        CHECK(listed.exit_code == 0);
        for (const auto& criterion : lesson.rubric.criteria) CHECK(listed.output.find(criterion.name + ":") != std::string::npos);
        ++built_lessons;
    }
    CHECK(built_lessons >= 3);
}

TEST_CASE("cuda backend: without a GPU, auto grades on the simulator and cuda stops with exit code 4") {
    const GpuProbe gpu = probe_gpu();
    if (gpu.usable) {
        MESSAGE("this machine has a GPU: the no-GPU answers cannot be checked here");
        return;
    }
    CHECK_FALSE(gpu.reason.empty());
    const lesson_tests::TestedLesson& tested = lesson_tests::tested_lesson(3);
    const std::string dir = lesson_tests::write_submission(tested, "cuda-backend-auto", lesson_tests::solution_source(tested));

    GradeRequest on_cuda = lesson_tests::request_for(tested, dir);
    on_cuda.backend = "cuda";
    const GradeReport refused = grade_submission(on_cuda);
    CHECK(refused.exit_code() == 4);
    CHECK(refused.kit_fault.find("no GPU") != std::string::npos);
    CHECK(refused.kit_fault.find("--backend sim") != std::string::npos);
    CHECK(refused.lessons.empty());

    GradeRequest on_auto = lesson_tests::request_for(tested, dir);
    on_auto.backend = "auto";
    on_auto.topology = "h200";   // the one-GPU scenarios only: enough to see which backend graded
    const GradeReport graded = grade_submission(on_auto);
    INFO(lesson_tests::report_text(graded));
    CHECK(graded.backend == "sim");
    REQUIRE(graded.lessons.size() == 1);
    CHECK(graded.lessons[0].outcome == LessonOutcome::Graded);
    CHECK(graded.cases_passed() > 0);
    CHECK(graded.cases_failed() == 0);
    CHECK(graded.exit_code() == 0);
}
