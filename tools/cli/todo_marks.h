// The TODO(n) marks of an exercise file: the skeleton has one per piece to write and the student deletes
// each with the placeholder it stands in, so the marks left say which pieces are still to do.
#pragma once

#include <string>
#include <vector>

#include "lesson_files.h"

namespace mgpu::cli {

// The ids of the TODO(id) marks in `text` ("1", "5a"), each once, in the order they first appear. A mark
// opens a comment ("// TODO(3) ..."); a TODO(n) named inside a sentence is not one.
std::vector<std::string> todo_marks(const std::string& text);

struct TodoProgress {
    std::vector<std::string> in_skeleton;  // every TODO of the lesson, in order
    std::vector<std::string> left;         // those whose mark is still in the student's files
    std::size_t done() const { return in_skeleton.size() - left.size(); }
};

// Compares the student's files with the pristine skeleton. A mark the student added that the skeleton
// lacks is not counted.
TodoProgress todo_progress(const LessonFiles& lesson);

}  // namespace mgpu::cli
