// `list`: where the student stands in every lesson, from the exercise files and the progress file,
// without building or grading anything.
#include <cstdio>
#include <iostream>

#include "columns.h"
#include "command.h"
#include "exit_codes.h"
#include "lesson_files.h"
#include "progress.h"
#include "todo_marks.h"
#include "translate.h"

namespace mgpu::cli {

namespace {

std::string points(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

std::string check_column(const LessonProgress& lesson) {
    if (!lesson.last_check) return tr("not checked yet");
    const CheckRecord& check = *lesson.last_check;
    if (check.outcome == "not built") return tr("did not build");
    if (check.outcome == "kit fault") return tr("checker failed");
    return points(check.score) + " / " + points(check.max_score);
}

std::string quiz_column(const LessonProgress& lesson) {
    if (!lesson.quiz) return tr("not taken");
    return std::to_string(lesson.quiz->right) + " / " + std::to_string(lesson.quiz->asked);
}

// The one thing to do next in this lesson, as a command or an edit.
std::string next_step(const LessonFiles& files, const TodoProgress& todos, const LessonProgress& lesson) {
    const std::string n = std::to_string(files.number);
    const std::string file = "exercises/" + files.exercise_folder.filename().string() + "/" +
                             (files.student_files.empty() ? std::string() : files.student_files.front());
    if (todos.in_skeleton.empty()) return tr("the skeleton is missing (lessons/*/skeleton): tools/lessons/make-exercise writes it");
    if (lesson.last_check && lesson.last_check->outcome == "not built")
        return fill(tr("make it build again: tools/mgpu check {} shows the compiler's message"), n);
    if (!todos.left.empty()) {
        const std::string& todo = todos.left.front();
        return fill(tr("write TODO({}) in {} (stuck? tools/mgpu hint {} {})"), todo, file, n, todo);
    }
    if (!lesson.last_check) return fill(tr("every TODO is written: grade it with tools/mgpu check {}"), n);
    const CheckRecord& check = *lesson.last_check;
    if (check.score < check.max_score)
        return check.first_failure.empty()
                   ? fill(tr("some checks fail: tools/mgpu check {} says what was expected"), n)
                   : fill(tr("fix the failing check \"{}\": tools/mgpu check {} says what was expected"), check.first_failure, n);
    if (!lesson.quiz || lesson.quiz->right < lesson.quiz->asked) return fill(tr("full marks: test what you learnt with tools/mgpu quiz {}"), n);
    return tr("done: go on to the next lesson");
}

int list(const Kit& kit, const ParsedArgs&) {
    const Progress progress = Progress::load(progress_file(kit));
    const std::vector<int> numbers = kit_lessons(kit);
    if (numbers.empty()) throw SetupError(fill(tr("there are no lesson folders in {}"), (kit.root / "exercises").string()));
    std::printf("%s %s %s %s %s\n", pad_to_columns("", 3).c_str(), pad_to_columns(tr("Lesson"), 38).c_str(), pad_to_columns(tr("TODOs"), 7).c_str(),
                pad_to_columns(tr("Last check"), 16).c_str(), pad_to_columns(tr("Quiz"), 10).c_str());
    for (int number : numbers) {
        const LessonFiles files = lesson_files(kit, number);
        const TodoProgress todos = todo_progress(files);
        auto found = progress.lessons.find(number);
        const LessonProgress lesson = found == progress.lessons.end() ? LessonProgress{} : found->second;
        const std::string todo_column = std::to_string(todos.done()) + "/" + std::to_string(todos.in_skeleton.size());
        std::printf("%2d  %s %s %s %s\n", number, pad_to_columns(tr(files.title), 38, true).c_str(), pad_to_columns(todo_column, 7).c_str(),
                    pad_to_columns(check_column(lesson), 16).c_str(), pad_to_columns(quiz_column(lesson), 10).c_str());
        std::printf("    %s %s\n", tr("next:"), next_step(files, todos, lesson).c_str());
    }
    std::printf("\n%s\n", tr("TODOs counts the TODO(n) marks gone from your files; the last check is the last `tools/mgpu check`."));
    return kExitOk;
}

}  // namespace

const Command list_command = {
    N_("Working on an exercise"),
    {
        .name = "list",
        .usage = "list",
        .summary = N_("Shows every lesson: TODOs written, last check score, quiz result and what to do next."),
        .description = N_("A TODO counts as written once its TODO(n) mark is gone from your exercise file (the skeleton\n"
                       "in lessons/NN-*/skeleton/ has them all). The score is the one your last `tools/mgpu check`\n"
                       "recorded in .mgpu/progress.json, and the quiz result the one `tools/mgpu quiz` recorded.\n"
                       "Nothing is built or graded."),
        .examples = "  tools/mgpu list\n",
    },
    list,
};

}  // namespace mgpu::cli
