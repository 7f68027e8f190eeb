// Points from test cases: each criterion's points are shared equally by its test cases; a
// passed case earns its share, a failed one nothing, a skipped one is left out of both the score
// and the maximum (it was not run here, so it can neither earn nor lose).
#include "grading.h"

namespace mgpu::judge {

const char* to_string(CaseStatus status) {
    switch (status) {
        case CaseStatus::Passed: return "passed";
        case CaseStatus::Failed: return "failed";
        case CaseStatus::Skipped: return "skipped";
        case CaseStatus::Crashed: return "crashed";
        case CaseStatus::TimedOut: return "timed out";
        case CaseStatus::MemoryExceeded: return "memory limit";
        case CaseStatus::OutputExceeded: return "output limit";
        case CaseStatus::Unfinished: return "not finished";
    }
    return "?";
}

bool counts_as_failed(CaseStatus status) {
    return status != CaseStatus::Passed && status != CaseStatus::Skipped && status != CaseStatus::Unfinished;
}

void score_lesson(const Rubric& rubric, LessonResult* lesson) {
    lesson->criteria.clear();
    lesson->score = 0;
    lesson->max_score = 0;
    for (const auto& criterion : rubric.criteria) {
        CriterionResult result;
        result.criterion = criterion;
        int cases = 0;
        for (const auto& test : lesson->cases) cases += test.criterion == criterion.name ? 1 : 0;
        const double share = cases > 0 ? criterion.points / cases : 0.0;
        if (cases == 0) result.max = criterion.points;   // not built: nothing ran, everything is lost
        for (auto& test : lesson->cases) {
            if (test.criterion != criterion.name) continue;
            if (test.status == CaseStatus::Skipped || test.status == CaseStatus::Unfinished) {
                test.max_points = 0;
                test.points = 0;
                ++(test.status == CaseStatus::Skipped ? result.skipped : result.unfinished);
                continue;
            }
            test.max_points = share;
            test.points = test.status == CaseStatus::Passed ? share : 0.0;
            result.max += share;
            result.earned += test.points;
            if (test.status == CaseStatus::Passed) {
                ++result.passed;
            } else {
                ++result.failed;
            }
        }
        lesson->score += result.earned;
        lesson->max_score += result.max;
        lesson->criteria.push_back(result);
    }
}

double GradeReport::score() const {
    double total = 0;
    for (const auto& lesson : lessons) total += lesson.score;
    return total;
}

double GradeReport::max_score() const {
    double total = 0;
    for (const auto& lesson : lessons) total += lesson.max_score;
    return total;
}

int GradeReport::cases_passed() const {
    int count = 0;
    for (const auto& lesson : lessons) {
        for (const auto& test : lesson.cases) count += test.status == CaseStatus::Passed ? 1 : 0;
    }
    return count;
}

int GradeReport::cases_failed() const {
    int count = 0;
    for (const auto& lesson : lessons) {
        for (const auto& test : lesson.cases) count += counts_as_failed(test.status) ? 1 : 0;
    }
    return count;
}

int GradeReport::cases_skipped() const {
    int count = 0;
    for (const auto& lesson : lessons) {
        for (const auto& test : lesson.cases) count += test.status == CaseStatus::Skipped ? 1 : 0;
    }
    return count;
}

int GradeReport::cases_unfinished() const {
    int count = 0;
    for (const auto& lesson : lessons) {
        for (const auto& test : lesson.cases) count += test.status == CaseStatus::Unfinished ? 1 : 0;
    }
    return count;
}

int GradeReport::exit_code() const {
    if (!kit_fault.empty() || cases_unfinished() > 0) return 4;
    bool not_built = false;
    for (const auto& lesson : lessons) {
        if (lesson.outcome == LessonOutcome::KitFault) return 4;
        not_built = not_built || lesson.outcome == LessonOutcome::NotBuilt;
    }
    if (not_built) return 3;
    return cases_failed() > 0 ? 1 : 0;
}

}  // namespace mgpu::judge
