// `reset N`: the lesson's skeleton back in exercises/, from the pristine copy in lessons/NN-*/skeleton/.
// The student's files are saved first, so that a reset is never the end of anybody's work.
#include <iostream>
#include <string>
#include <unistd.h>

#include "command.h"
#include "exit_codes.h"
#include "lesson_files.h"
#include "progress.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

bool confirmed_on_terminal(const std::string& question) {
    std::cout << question << " [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes";
}

int reset(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError(tr("say which lesson to reset, e.g. tools/mgpu reset 1"));
    const LessonFiles lesson = lesson_files(kit, lesson_argument(args.positionals[0]));
    const std::string n = std::to_string(lesson.number);

    std::vector<std::string> changed;
    for (const std::string& file : lesson.student_files) {
        const fs::path skeleton = lesson.skeleton_folder / file;
        if (!fs::is_regular_file(skeleton))
            throw SetupError(skeleton.string() + " is missing, so there is no skeleton to go back to. "
                             "tools/lessons/make-exercise writes it (in a kit with the master sources), or take it from "
                             "the kit's repository.");
        if (read_text(skeleton) != read_text(lesson.exercise_folder / file)) changed.push_back(file);
    }
    if (changed.empty()) {
        std::cout << fill(tr("Lesson {}'s files are the skeleton already; nothing was changed."), n) << "\n";
        return kExitOk;
    }

    const fs::path backup = state_folder(kit) / "backups" / (lesson.exercise_folder.filename().string() + "-" + utc_now_stamp());
    std::string names;
    for (const std::string& file : changed) names += (names.empty() ? "" : ", ") + file;
    if (!args.has("--yes")) {
        if (!::isatty(STDIN_FILENO))
            throw UsageError(fill(tr("reset replaces your work, so it asks first, and there is no terminal to ask on: pass "
                                     "--yes to reset lesson {} (your files are saved to {} first)"),
                                  n, backup.string()));
        if (!confirmed_on_terminal(fill(tr("Replace {} in {} with the skeleton? Your files are saved to {} first."), names,
                                        lesson.exercise_folder.string(), backup.string()))) {
            std::cout << tr("Nothing was changed.") << "\n";
            return kExitOk;
        }
    }

    fs::create_directories(backup);
    for (const std::string& file : changed) {
        const fs::path working = lesson.exercise_folder / file;
        if (fs::exists(working)) fs::copy_file(working, backup / file, fs::copy_options::overwrite_existing);
    }
    for (const std::string& file : changed)
        fs::copy_file(lesson.skeleton_folder / file, lesson.exercise_folder / file, fs::copy_options::overwrite_existing);
    std::cout << fill(tr("Lesson {} is the skeleton again ({})."), n, names) << "\n"
              << fill(tr("Your files were saved to {}; copy one back to take up where you were."), backup.string()) << "\n";
    return kExitOk;
}

}  // namespace

const Command reset_command = {
    N_("Working on an exercise"),
    {
        .name = "reset",
        .usage = "reset LESSON [--yes]",
        .summary = N_("Puts the lesson's skeleton back, after saving your files to .mgpu/backups/."),
        .description = N_("Replaces your exercise files of the lesson with the skeleton kept in lessons/NN-*/skeleton/.\n"
                       "Each file you changed is first copied to .mgpu/backups/NN-name-YYYYMMDD-HHMMSS/. Without --yes\n"
                       "it asks on the terminal, and refuses when there is none (a script must pass --yes)."),
        .options = {{"--yes", "", N_("reset without asking")}},
        .max_positionals = 1,
        .examples = "  tools/mgpu reset 2\n  tools/mgpu reset 2 --yes\n",
    },
    reset,
};

}  // namespace mgpu::cli
