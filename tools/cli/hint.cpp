// `hint N [TODO]`: the hints of lessons/NN-*/hints.json, one more per call. Each TODO's hints go from a
// nudge towards the lesson's section, to the API to use, to the shape of the code; the progress file
// remembers how many were shown, so that the student decides how much help to take.
#include <cctype>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "columns.h"
#include "command.h"
#include "exit_codes.h"
#include "lesson_files.h"
#include "progress.h"
#include "todo_marks.h"
#include "translate.h"

namespace mgpu::cli {

using nlohmann::json;

namespace {

struct TodoHints {
    std::string todo;
    std::string task;  // what the TODO asks for, in one line
    std::vector<std::string> hints;
};

std::vector<TodoHints> read_hints(const LessonFiles& lesson) {
    const auto file = lesson.lesson_folder / "hints.json";
    const std::string text = read_text(file);
    if (text.empty()) throw SetupError(file.string() + " is missing: lesson " + std::to_string(lesson.number) + " has no hints");
    json document = json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.contains("todos"))
        throw SetupError(file.string() + " is not a hints file (a JSON object with a \"todos\" list)");
    std::vector<TodoHints> todos;
    // The hints are written in English; tr() gives them in the student's language from the catalog.
    for (const json& entry : document.at("todos")) {
        std::vector<std::string> hints;
        for (const std::string& hint : entry.at("hints").get<std::vector<std::string>>()) hints.push_back(tr(hint));
        todos.push_back({entry.at("todo").get<std::string>(), tr(entry.value("task", std::string())), hints});
    }
    return todos;
}

// "5" names "5a" and "5b" when the lesson has no plain 5: the first of them not written yet.
const TodoHints* find_todo(const std::vector<TodoHints>& todos, const std::string& id, const TodoProgress& progress) {
    for (const TodoHints& todo : todos)
        if (todo.todo == id) return &todo;
    const TodoHints* first = nullptr;
    for (const TodoHints& todo : todos) {
        if (todo.todo.rfind(id, 0) != 0 || todo.todo.size() != id.size() + 1 || !std::isalpha(static_cast<unsigned char>(todo.todo.back())))
            continue;
        if (first == nullptr) first = &todo;
        for (const std::string& left : progress.left)
            if (left == todo.todo) return &todo;
    }
    return first;
}

// Hints are stored as paragraphs; the terminal gets them in lines of at most `width` columns, each
// continuation indented as the line it continues (so that "- " lists stay lists). Lines break at
// spaces only: Japanese text, which has few, keeps its long lines for the terminal to fold.
std::string wrapped(const std::string& text, std::size_t width = 100) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const std::size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
        const std::size_t hanging = indent + (line.compare(indent, 2, "- ") == 0 ? 2 : 0);
        std::string current = line.substr(0, indent);
        std::istringstream words(line.substr(indent));
        std::string word;
        bool first = true;
        while (words >> word) {
            if (!first && columns_of(current) + 1 + columns_of(word) > width) {
                out += current + "\n";
                current = std::string(hanging, ' ') + word;
            } else {
                current += (first ? "" : " ") + word;
            }
            first = false;
        }
        out += current + "\n";
    }
    return out;
}

int hint(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError(tr("say which lesson's hints you want, e.g. tools/mgpu hint 1"));
    const LessonFiles lesson = lesson_files(kit, lesson_argument(args.positionals[0]));
    const std::vector<TodoHints> todos = read_hints(lesson);
    const TodoProgress progress = todo_progress(lesson);
    const std::string n = std::to_string(lesson.number);
    std::string known;
    for (const TodoHints& todo : todos) known += (known.empty() ? "" : ", ") + todo.todo;

    std::string wanted;
    if (args.positionals.size() > 1) {
        wanted = args.positionals[1];
        if (wanted.rfind("TODO(", 0) == 0 && wanted.back() == ')') wanted = wanted.substr(5, wanted.size() - 6);
    } else if (!progress.left.empty()) {
        wanted = progress.left.front();
    } else {
        std::cout << fill(tr("Every TODO of lesson {} is written. For a hint on one of them anyway, name it: tools/mgpu hint "
                             "{} TODO (one of {});\ntools/mgpu check {} says which checks still fail."),
                          n, n, known, n)
                  << "\n";
        return kExitOk;
    }
    const TodoHints* todo = find_todo(todos, wanted, progress);
    if (todo == nullptr) throw UsageError(fill(tr("lesson {} has no TODO({}); its TODOs are {}"), n, wanted, known));

    Progress record = Progress::load(progress_file(kit));
    int& shown = record.lessons[lesson.number].hints_shown[todo->todo];
    const int total = static_cast<int>(todo->hints.size());
    const bool more = shown < total;
    if (more) ++shown;

    std::cout << fill(tr("Lesson {}, TODO({})"), n, todo->todo) << (todo->task.empty() ? "" : ": " + todo->task) << "\n";
    for (int i = 0; i < shown; ++i) {
        const bool newest = i == shown - 1 && more;
        std::cout << "\n" << fill(newest ? tr("Hint {} of {}:") : tr("(hint {} of {})"), i + 1, total) << "\n"
                  << wrapped(todo->hints[static_cast<std::size_t>(i)]);
    }
    std::cout << "\n";
    if (shown < total)
        std::cout << fill(tr("Still stuck? tools/mgpu hint {} {} shows hint {}."), n, todo->todo, shown + 1) << "\n";
    else
        std::cout << fill(tr("That was the last hint for TODO({}). Write it, then tools/mgpu check {} says what is still "
                             "wrong, and the lesson's README.md has the whole section."),
                          todo->todo, n)
                  << "\n";
    record.save(progress_file(kit));
    return kExitOk;
}

}  // namespace

const Command hint_command = {
    N_("Working on an exercise"),
    {
        .name = "hint",
        .usage = "hint LESSON [TODO]",
        .summary = N_("Shows one more hint for a TODO of a lesson (the first TODO not yet written by default)."),
        .description = N_("Each TODO has a few hints, from a nudge towards the lesson's section, to the API to use, to the\n"
                       "shape of the code; each call shows the hints seen so far and one more. How many you have seen\n"
                       "is kept in .mgpu/progress.json. The hints are in lessons/NN-*/hints.json.\n"
                       "TODO is the mark's id: 3, 5a, or TODO(3)."),
        .max_positionals = 2,
        .examples = "  tools/mgpu hint 1\n  tools/mgpu hint 3 2\n  tools/mgpu hint 1 5a\n",
    },
    hint,
};

}  // namespace mgpu::cli
