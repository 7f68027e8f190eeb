// The lessons whose checkers the lesson grading tests grade (tested_lessons.cpp, written by meson
// from checker/tests/meson.build): one test executable serves them all, so a new lesson adds a row
// there, not another compilation of the shared test sources.
#pragma once

#include <span>

namespace lesson_tests {

struct TestedLesson {
    int number;
    const char* id;            // "03-peer-to-peer": its folder under checker/lessons, solutions and exercises
    const char* student_file;  // "peer_access.cu"
    const char* adversarial;   // checker/tests/adversarial/<this file>
    const char* mutants_dir;   // where the build generated its mutants
};

std::span<const TestedLesson> tested_lessons();

}  // namespace lesson_tests
