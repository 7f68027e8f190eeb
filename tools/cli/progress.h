// What the kit remembers of a student's work between commands: the last `check` of each lesson, how
// many hints of each TODO were shown and the last quiz result. It lives in .mgpu/progress.json at the
// kit's root rather than in build/, so that a clean build forgets none of it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "kit.h"

namespace mgpu::cli {

struct CheckRecord {
    double score = 0;
    double max_score = 0;
    std::string outcome;        // "graded", "not built" or "kit fault", as the judge reports it
    std::string first_failure;  // the name of the first failed test case; empty when none failed
    std::string when;           // UTC, ISO 8601
};

struct QuizRecord {
    int right = 0;
    int asked = 0;
    std::string when;
};

struct LessonProgress {
    std::optional<CheckRecord> last_check;
    std::map<std::string, int> hints_shown;  // TODO id ("1", "5a") -> hints shown so far
    std::optional<QuizRecord> quiz;
};

struct Progress {
    std::map<int, LessonProgress> lessons;

    // A missing file is an empty record; a damaged one throws SetupError naming the file.
    static Progress load(const std::filesystem::path& file);
    // Written to a temporary file and renamed, so that an interrupted command leaves the old record.
    void save(const std::filesystem::path& file) const;
};

// The kit's state folder (.mgpu/ at its root) and the progress file in it.
std::filesystem::path state_folder(const Kit& kit);
std::filesystem::path progress_file(const Kit& kit);

// The current time as UTC ISO 8601 ("2026-12-03T09:49:36Z"), and as a file-name stamp ("20261203-094936").
std::string utc_now_iso();
std::string utc_now_stamp();

}  // namespace mgpu::cli
