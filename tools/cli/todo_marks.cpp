#include "todo_marks.h"

#include <algorithm>
#include <regex>

namespace mgpu::cli {

std::vector<std::string> todo_marks(const std::string& text) {
    // Only a TODO that opens a comment is a mark: the file's header names them in prose too.
    static const std::regex mark(R"(//[ \t]*TODO\(([0-9]+[a-z]?)\))");
    std::vector<std::string> ids;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), mark); it != std::sregex_iterator(); ++it) {
        std::string id = (*it)[1];
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    return ids;
}

TodoProgress todo_progress(const LessonFiles& lesson) {
    TodoProgress progress;
    std::vector<std::string> in_student;
    for (const std::string& file : lesson.student_files) {
        for (const std::string& id : todo_marks(read_text(lesson.skeleton_folder / file)))
            if (std::find(progress.in_skeleton.begin(), progress.in_skeleton.end(), id) == progress.in_skeleton.end())
                progress.in_skeleton.push_back(id);
        for (const std::string& id : todo_marks(read_text(lesson.exercise_folder / file))) in_student.push_back(id);
    }
    for (const std::string& id : progress.in_skeleton)
        if (std::find(in_student.begin(), in_student.end(), id) != in_student.end()) progress.left.push_back(id);
    return progress;
}

}  // namespace mgpu::cli
