// `watch [N]`: checks the lesson again each time one of its files is saved. The kernel's inotify
// reports the saves, so nothing is polled: the command sleeps until a file is written or renamed
// into place (editors save either way), lets a burst of events settle, and runs `check N` again.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "command.h"
#include "exit_codes.h"
#include "lesson_files.h"
#include "process.h"
#include "progress.h"
#include "translate.h"
#include "watch_screen.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t interrupted = 0;

void on_interrupt(int) { interrupted = 1; }

// An editor's save comes as several events (write, close, rename of a backup): wait this long after
// the last one before checking, so that one save makes one check.
constexpr int kSettleMilliseconds = 200;

class DirectoryWatch {
public:
    explicit DirectoryWatch(const fs::path& folder) : fd_(::inotify_init1(IN_CLOEXEC)) {
        if (fd_ < 0) throw SetupError(std::string("inotify is not available here: ") + std::strerror(errno));
        if (::inotify_add_watch(fd_, folder.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0)
            throw SetupError("cannot watch " + folder.string() + ": " + std::strerror(errno));
    }
    ~DirectoryWatch() { ::close(fd_); }
    DirectoryWatch(const DirectoryWatch&) = delete;
    DirectoryWatch& operator=(const DirectoryWatch&) = delete;

    // Blocks until one of `names` is saved; false when interrupted.
    bool wait_for_save(const std::vector<std::string>& names) {
        bool saved = false;
        while (!interrupted) {
            pollfd ready{fd_, POLLIN, 0};
            const int result = ::poll(&ready, 1, saved ? kSettleMilliseconds : -1);
            if (result < 0) {
                if (errno == EINTR) continue;
                throw SetupError(std::string("waiting for a save failed: ") + std::strerror(errno));
            }
            if (result == 0) return true;  // the burst of events is over
            if (read_events(names)) saved = true;
        }
        return false;
    }

private:
    bool read_events(const std::vector<std::string>& names) {
        alignas(inotify_event) char buffer[8192];
        const ssize_t length = ::read(fd_, buffer, sizeof buffer);
        if (length <= 0) return false;
        bool relevant = false;
        for (ssize_t offset = 0; offset < length;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
            if (event->len > 0)
                for (const std::string& name : names)
                    if (name == event->name) relevant = true;
            offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
        return relevant;
    }

    int fd_;
};

// Without a lesson number: the first lesson that has no full marks yet.
int lesson_to_watch(const Kit& kit, const ParsedArgs& args) {
    if (!args.positionals.empty()) return lesson_argument(args.positionals[0]);
    const Progress progress = Progress::load(progress_file(kit));
    const std::vector<int> lessons = kit_lessons(kit);
    if (lessons.empty()) throw SetupError(fill(tr("there are no lesson folders in {}"), (kit.root / "exercises").string()));
    for (int number : lessons) {
        auto found = progress.lessons.find(number);
        if (found == progress.lessons.end() || !found->second.last_check) return number;
        const CheckRecord& check = *found->second.last_check;
        if (check.score < check.max_score) return number;
    }
    return lessons.back();
}

ExitStatus run_check(const Kit& kit, const LessonFiles& lesson, bool clear_screen) {
    if (clear_screen) std::cout << "\033[H\033[2J" << std::flush;
    std::cout << "tools/mgpu check " << lesson.number << "   (" << utc_now_iso() << ")\n" << std::flush;
    fs::create_directories(state_folder(kit));
    const fs::path report = state_folder(kit) / "watch-report.txt";
    const ExitStatus status = run_process({"/proc/self/exe", "--kit-root", kit.root.string(), "check", std::to_string(lesson.number)},
                                          SpawnOptions{.output_file = report});
    std::cout << first_screen(read_text(report), lesson.number) << std::flush;
    return status;
}

int watch(const Kit& kit, const ParsedArgs& args) {
    const LessonFiles lesson = lesson_files(kit, lesson_to_watch(kit, args));
    const bool once = args.has("--once-after-change");
    const bool clear_screen = !args.has("--no-clear");
    std::string names;
    for (const std::string& file : lesson.student_files) names += (names.empty() ? "" : ", ") + file;

    struct sigaction stop {};
    stop.sa_handler = on_interrupt;  // no SA_RESTART: the wait must end on Ctrl-C
    ::sigaction(SIGINT, &stop, nullptr);
    ::sigaction(SIGTERM, &stop, nullptr);

    DirectoryWatch folder(lesson.exercise_folder);
    const std::string waiting =
        "\n" + fill(tr("Watching {} in {}: save to check again, Ctrl-C to stop."), names, lesson.exercise_folder.string()) + "\n";
    if (!once) run_check(kit, lesson, clear_screen);
    std::cout << waiting << std::flush;
    while (folder.wait_for_save(lesson.student_files)) {
        const ExitStatus status = run_check(kit, lesson, clear_screen);
        if (status.signal == SIGINT || interrupted) break;
        if (once) return status.signal != 0 ? kExitSetupProblem : status.code;
        std::cout << waiting << std::flush;
    }
    std::cout << "\n" << fill(tr("Stopped watching lesson {}."), lesson.number) << "\n";
    return kExitOk;
}

}  // namespace

const Command watch_command = {
    N_("Working on an exercise"),
    {
        .name = "watch",
        .usage = "watch [LESSON] [--once-after-change] [--no-clear]",
        .summary = N_("Checks the lesson again at every save of your file, until Ctrl-C."),
        .description = N_("Runs `tools/mgpu check LESSON`, then waits for you to save one of the lesson's files and runs\n"
                       "it again, clearing the screen between runs, and shows the score table and the first failing\n"
                       "check (`check` shows them all). Saves are seen through Linux's inotify, so waiting costs nothing. Without LESSON it\n"
                       "watches the first lesson that has no full marks yet (see tools/mgpu list)."),
        .options =
            {
                {"--once-after-change", "", N_("no check at the start: wait for one save, check once and exit with check's code")},
                {"--no-clear", "", N_("keep the earlier runs on the screen")},
            },
        .max_positionals = 1,
        .examples = "  tools/mgpu watch 2\n",
    },
    watch,
};

}  // namespace mgpu::cli
