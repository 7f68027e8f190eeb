// Grading a whole class: every student's folder through the judge, students side by side, one
// gradebook (grades.csv) and per student the reports course platforms read. Shared by
// `grade-class`, `bench grading` and the cluster scripts (tools/slurm/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "class_roster.h"
#include "gradebook.h"
#include "kit.h"

namespace mgpu::cli {

struct ClassGrading {
    std::filesystem::path class_dir;
    std::filesystem::path out_dir;
    std::vector<int> lessons;           // empty: every lesson the kit has a checker for
    int jobs = 0;                       // 0: one per core (the cuda backend: one)
    std::uint64_t seed = 1;
    std::string backend = "sim";
    std::string topology;
    int part = 1, parts = 1;            // grade chunk `part` of `parts` (a cluster array task)
    std::filesystem::path build_cache;  // the judge's build cache; empty: the kit's build/checker-cache
    bool use_gradebook_cache = true;
    bool show_progress = true;
};

struct StudentOutcome {
    Student student;
    std::vector<GradeRow> rows;
    bool from_cache = false;
    double seconds = 0;
};

struct ClassResult {
    std::vector<LessonColumns> columns;
    std::vector<StudentOutcome> students;   // in roster order
    std::filesystem::path csv_path;
    int students_at_once = 1, cases_at_once = 1;
    double seconds = 0;

    int graded_now() const;
    int from_cache() const;
    bool any_kit_error() const;
};

// Throws UsageError for a wrong lesson or class folder and SetupError when the gradebook cannot
// be written; a student's own failure (and the kit's, for one student) only marks that row.
ClassResult grade_class(const Kit& kit, const ClassGrading& settings);

// The table printed at the end: a row per student and lesson, then the totals.
std::string class_summary(const ClassResult& result);

}  // namespace mgpu::cli
