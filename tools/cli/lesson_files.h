// Where one lesson's pieces are in the kit: the student's working copy (exercises/NN-name), the lesson's
// text and data (lessons/NN-name: README.md, hints.json, quiz.json) and the pristine skeleton that
// tools/lessons/make-exercise keeps beside them (lessons/NN-name/skeleton), which both editions ship.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kit.h"

namespace mgpu::cli {

struct LessonFiles {
    int number = 0;
    std::string title;                        // "Peer-to-peer memory access"
    std::filesystem::path exercise_folder;    // exercises/03-peer-to-peer
    std::filesystem::path lesson_folder;      // lessons/03-peer-to-peer
    std::filesystem::path skeleton_folder;    // lessons/03-peer-to-peer/skeleton
    std::vector<std::string> student_files;   // the files the student writes ("peer_access.cu")
};

// Throws UsageError when the kit has no lesson `number`, listing the ones it has.
LessonFiles lesson_files(const Kit& kit, int number);

// The lessons of exercises/, in order.
std::vector<int> kit_lessons(const Kit& kit);

// "3" or "03" -> 3, or a UsageError that says what a lesson number is.
int lesson_argument(const std::string& text);

// The whole file as text; empty when it cannot be read.
std::string read_text(const std::filesystem::path& file);

}  // namespace mgpu::cli
