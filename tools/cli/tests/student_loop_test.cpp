// The student's loop (list, hint, reset, quiz, watch and what check records) on a copy of the kit's
// lesson folders, so that the tests write their progress and edits there and not into the kit.
#include <doctest/doctest.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "check_record.h"
#include "cli_invocation.h"
#include "student_kit_copy.h"
#include "lesson_files.h"
#include "progress.h"
#include "todo_marks.h"
#include "watch_screen.h"

using namespace mgpu::cli;
namespace fs = std::filesystem;

namespace {

const fs::path kSourceRoot = MGPU_TEST_SOURCE_ROOT;

// The student's commands, run on a copy of the kit (student_kit_copy.h).
struct KitCopy : StudentKitCopy {
    KitCopy() : StudentKitCopy(kSourceRoot, "mgpu-student-loop") {}
    CliResult run(const std::string& arguments, const std::string& input = "") const {
        std::ofstream(root / "stdin.txt") << input;
        return run_cli("--kit-root '" + root.string() + "' " + arguments + " <'" + (root / "stdin.txt").string() + "'");
    }
    fs::path lesson1_file() const { return root / "exercises" / "01-devices" / "devices.cu"; }
};

std::string text_of(const fs::path& file) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The right answers of a lesson's quiz, one letter a line, read from its quiz.json.
std::string right_answers(const fs::path& quiz_json, bool all_right) {
    std::string answers;
    std::istringstream text(text_of(quiz_json));
    std::string line;
    bool first = true;
    while (std::getline(text, line)) {
        auto at = line.find("\"answer\": ");
        if (at == std::string::npos) continue;
        int index = std::stoi(line.substr(at + 10));
        if (!all_right && first) index = index == 0 ? 1 : 0;
        first = false;
        answers += static_cast<char>('a' + index);
        answers += "\n";
    }
    return answers;
}

}  // namespace

TEST_CASE("TODO marks open a comment and are read once each, in order, with letters") {
    CHECK(todo_marks("// TODO(1) a\n    //TODO(5a) b TODO(1)\n// TODO(5b)\n// TODO(x) TODO() // TODO(3), continued")
          == std::vector<std::string>{"1", "5a", "5b", "3"});
    // A TODO named in prose (the file's header lists them) is not a mark.
    CHECK(todo_marks("// write the bodies marked TODO(1) to TODO(6)").empty());
    CHECK(todo_marks("no marks here").empty());
}

TEST_CASE("the progress file keeps checks, hints and quizzes, and a damaged one says how to start afresh") {
    KitCopy kit;
    const fs::path file = kit.root / ".mgpu" / "progress.json";
    Progress progress;
    progress.lessons[2].last_check = CheckRecord{3.5, 10, "graded", "case x", "2026-01-01T00:00:00Z"};
    progress.lessons[2].hints_shown["4"] = 2;
    progress.lessons[3].quiz = QuizRecord{5, 8, "2026-01-01T00:00:00Z"};
    progress.save(file);
    Progress again = Progress::load(file);
    REQUIRE(again.lessons[2].last_check.has_value());
    CHECK(again.lessons[2].last_check->score == 3.5);
    CHECK(again.lessons[2].last_check->first_failure == "case x");
    CHECK(again.lessons[2].hints_shown["4"] == 2);
    CHECK(again.lessons[3].quiz->right == 5);
    CHECK(Progress::load(kit.root / "missing.json").lessons.empty());
    std::ofstream(file) << "{ not json";
    CHECK_THROWS_WITH_AS(Progress::load(file), doctest::Contains("Delete it"), std::exception);
}

TEST_CASE("check's results.json becomes each lesson's last score and first failed check") {
    KitCopy kit;
    Kit paths{kit.root, kit.root / "build"};
    const fs::path results = kit.root / "results.json";
    std::ofstream(results) << R"({"score": 12, "max_score": 40, "tests": [
        {"name": "lesson 1 case passed", "status": "passed", "tags": ["lesson 1", "count"]},
        {"name": "count: no device", "status": "failed", "tags": ["lesson 1", "count"]},
        {"name": "later failure", "status": "failed", "tags": ["lesson 1", "list"]},
        {"name": "lesson 2 build: split_work.cu", "status": "failed", "tags": ["lesson 2", "build"]}],
      "extra_data": {"lessons": [{"lesson": 1, "score": 12, "max_score": 20, "outcome": "graded"},
                                 {"lesson": 2, "score": 0, "max_score": 20, "outcome": "not built"}]}})";
    record_check_results(paths, results);
    Progress progress = Progress::load(progress_file(paths));
    REQUIRE(progress.lessons[1].last_check.has_value());
    CHECK(progress.lessons[1].last_check->score == 12);
    CHECK(progress.lessons[1].last_check->first_failure == "count: no device");
    CHECK(progress.lessons[2].last_check->outcome == "not built");

    CliResult list = kit.run("list");
    CHECK(list.code == 0);
    CHECK(contains(list.output, "12 / 20"));
    CHECK(contains(list.output, "did not build"));
    CHECK(contains(list.output, "make it build again: tools/mgpu check 2"));
}

TEST_CASE("list counts the TODOs written against the skeleton and says what to do next") {
    KitCopy kit;
    CliResult fresh = kit.run("list");
    CHECK(fresh.code == 0);
    CHECK(contains(fresh.output, "Device enumeration and selection"));
    CHECK(contains(fresh.output, "0/7"));
    CHECK(contains(fresh.output, "not checked yet"));
    CHECK(contains(fresh.output, "next: write TODO(1) in exercises/01-devices/devices.cu (stuck? tools/mgpu hint 1 1)"));

    std::string text = text_of(kit.lesson1_file());
    for (const char* written : {"// TODO(1)", "// TODO(2)"}) text.replace(text.find(written), std::string(written).size(), "// done");
    std::ofstream(kit.lesson1_file()) << text;
    CliResult later = kit.run("list");
    CHECK(contains(later.output, "2/7"));
    CHECK(contains(later.output, "next: write TODO(3)"));
}

TEST_CASE("hint shows one more hint per call, remembers it, and ends with where to look") {
    KitCopy kit;
    CliResult first = kit.run("hint 1");
    CHECK(first.code == 0);
    CHECK(contains(first.output, "Lesson 1, TODO(1)"));
    CHECK(contains(first.output, "Hint 1 of 3"));
    CHECK(contains(first.output, "Section 1.2"));
    CHECK_FALSE(contains(first.output, "Hint 2 of 3"));
    CHECK(contains(first.output, "tools/mgpu hint 1 1 shows hint 2"));

    CliResult second = kit.run("hint 1 1");
    CHECK(contains(second.output, "(hint 1 of 3)"));
    CHECK(contains(second.output, "Hint 2 of 3"));
    CHECK(contains(second.output, "cudaGetDeviceCount"));
    kit.run("hint 1 'TODO(1)'");
    CliResult past_the_end = kit.run("hint 1 1");
    CHECK(contains(past_the_end.output, "(hint 3 of 3)"));
    CHECK(contains(past_the_end.output, "That was the last hint for TODO(1)"));

    // Another TODO has hints of its own; "5" names the first of 5a and 5b not written.
    CHECK(contains(kit.run("hint 1 5").output, "TODO(5a)"));
    CliResult unknown = kit.run("hint 1 9");
    CHECK(unknown.code == 2);
    CHECK(contains(unknown.output, "no TODO(9); its TODOs are 1, 2, 3, 4, 5a, 5b, 6"));
    CHECK(kit.run("hint 9").code == 2);
    CHECK(kit.run("hint").code == 2);
}

TEST_CASE("every lesson has hints for every TODO of its skeleton, each a nudge, the API, then the shape") {
    Kit kit{kSourceRoot, ""};
    for (int number : kit_lessons(kit)) {
        CAPTURE(number);
        const LessonFiles lesson = lesson_files(kit, number);
        const std::string hints = text_of(lesson.lesson_folder / "hints.json");
        REQUIRE_FALSE(hints.empty());
        const TodoProgress todos = todo_progress(lesson);
        REQUIRE_FALSE(todos.in_skeleton.empty());
        for (const std::string& todo : todos.in_skeleton) {
            CAPTURE(todo);
            CHECK(contains(hints, "\"todo\": \"" + todo + "\""));
        }
        CHECK(contains(hints, "The shape of the code"));
    }
}

TEST_CASE("reset asks first, refuses without a terminal, and saves the student's file before") {
    KitCopy kit;
    const std::string skeleton = text_of(kit.lesson1_file());
    std::ofstream(kit.lesson1_file()) << "// my work\n";

    CliResult refused = kit.run("reset 1");
    CHECK(refused.code == 2);
    CHECK(contains(refused.output, "pass --yes"));
    CHECK(text_of(kit.lesson1_file()) == "// my work\n");

    CliResult done = kit.run("reset 1 --yes");
    CHECK(done.code == 0);
    CHECK(contains(done.output, "Lesson 1 is the skeleton again (devices.cu)"));
    CHECK(text_of(kit.lesson1_file()) == skeleton);
    int backups = 0;
    for (const auto& backup : fs::directory_iterator(kit.root / ".mgpu" / "backups")) {
        CHECK(backup.path().filename().string().rfind("01-devices-", 0) == 0);
        CHECK(text_of(backup.path() / "devices.cu") == "// my work\n");
        ++backups;
    }
    CHECK(backups == 1);

    CliResult again = kit.run("reset 1 --yes");
    CHECK(again.code == 0);
    CHECK(contains(again.output, "the skeleton already; nothing was changed"));
}

TEST_CASE("the kit's exercise files are the skeleton reset puts back") {
    Kit kit{kSourceRoot, ""};
    for (int number : kit_lessons(kit)) {
        const LessonFiles lesson = lesson_files(kit, number);
        for (const std::string& file : lesson.student_files) {
            CAPTURE(file);
            CHECK(fs::is_regular_file(lesson.skeleton_folder / file));
        }
    }
}

TEST_CASE("quiz reads answers from standard input, scores them and list shows the result") {
    KitCopy kit;
    const fs::path quiz = kit.root / "lessons" / "01-devices" / "quiz.json";
    CliResult all_right = kit.run("quiz 1", right_answers(quiz, true));
    CHECK(all_right.code == 0);
    CHECK(contains(all_right.output, "Score: 7 / 7."));
    CHECK(contains(kit.run("list").output, "7 / 7"));

    CliResult one_wrong = kit.run("quiz 1", right_answers(quiz, false));
    CHECK(one_wrong.code == 1);
    CHECK(contains(one_wrong.output, "Not quite: the answer is"));
    CHECK(contains(one_wrong.output, "Score: 6 / 7."));
    CHECK(contains(kit.run("list").output, "6 / 7"));

    CliResult not_a_letter = kit.run("quiz 1", "z\n" + right_answers(quiz, true));
    CHECK(contains(not_a_letter.output, "'z' is not one of the letters a to"));

    CliResult cut_short = kit.run("quiz 1", "a\n");
    CHECK(cut_short.code == 2);
    CHECK(contains(cut_short.output, "the input ended. Nothing was recorded"));
    CHECK(contains(kit.run("list").output, "7 / 7"));  // the last whole quiz: the one that began with z
}

TEST_CASE("every lesson's quiz parses and has a right answer among its choices") {
    KitCopy kit;
    for (const char* lesson : {"1", "2", "3", "4"}) {
        CAPTURE(lesson);
        const LessonFiles files = lesson_files(Kit{kit.root, ""}, std::stoi(lesson));
        CliResult result = kit.run(std::string("quiz ") + lesson, right_answers(files.lesson_folder / "quiz.json", true));
        CHECK(result.code == 0);
        CHECK(contains(result.output, "Score: "));
    }
}

TEST_CASE("watch waits on inotify, not on a timer, and stops cleanly on Ctrl-C") {
    KitCopy kit;
    const fs::path output = kit.root / "watch.out";
    const pid_t watcher = ::fork();
    REQUIRE(watcher >= 0);
    if (watcher == 0) {
        const std::string command = "exec '" MGPU_CLI_EXE "' --kit-root '" + kit.root.string() +
                                    "' watch 1 --once-after-change --no-clear >'" + output.string() + "' 2>&1 </dev/null";
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Until it says it is watching, then a while more: a save of another file must not wake it.
    for (int i = 0; i < 100 && !contains(text_of(output), "Watching"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(contains(text_of(output), "Watching devices.cu in"));
    std::ofstream(kit.root / "exercises" / "01-devices" / "notes.txt") << "not a lesson file\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    CHECK_FALSE(contains(text_of(output), "tools/mgpu check 1"));
    ::kill(watcher, SIGINT);
    int status = 0;
    ::waitpid(watcher, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(contains(text_of(output), "Stopped watching lesson 1."));
}

TEST_CASE("watch --once-after-change checks the lesson after a save and exits with check's code") {
    // The copy has no rubric, so the check it runs fails at once with the checker's own exit code 4:
    // what is tested here is that the save is seen and the check is run and reported.
    KitCopy kit;
    const fs::path output = kit.root / "watch.out";
    const pid_t watcher = ::fork();
    REQUIRE(watcher >= 0);
    if (watcher == 0) {
        const std::string command = "exec '" MGPU_CLI_EXE "' --kit-root '" + kit.root.string() +
                                    "' watch 1 --once-after-change --no-clear >'" + output.string() + "' 2>&1 </dev/null";
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    for (int i = 0; i < 100 && !contains(text_of(output), "Watching"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Saved the way editors do: a new file renamed over the old one.
    const fs::path saved = kit.root / "exercises" / "01-devices" / "devices.cu.swp";
    std::ofstream(saved) << text_of(kit.lesson1_file()) << "// saved\n";
    fs::rename(saved, kit.lesson1_file());
    int status = 0;
    pid_t ended = 0;
    for (int i = 0; i < 600 && ended == 0; ++i) {
        ended = ::waitpid(watcher, &status, WNOHANG);
        if (ended == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (ended == 0) {
        ::kill(watcher, SIGKILL);
        ::waitpid(watcher, &status, 0);
        FAIL("watch did not check after the save: " << text_of(output));
    }
    CHECK(contains(text_of(output), "tools/mgpu check 1"));
    CHECK(contains(text_of(output), "The checker could not run"));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 4);
}

TEST_CASE("each quiz has one question per question of its lesson's Quick check section") {
    Kit kit{kSourceRoot, ""};
    for (int number : kit_lessons(kit)) {
        CAPTURE(number);
        const LessonFiles lesson = lesson_files(kit, number);
        std::istringstream readme(text_of(lesson.lesson_folder / "README.md"));
        std::string line;
        bool in_quick_check = false;
        int in_text = 0;
        while (std::getline(readme, line)) {
            if (line.rfind("## ", 0) == 0) in_quick_check = contains(line, "Quick check");
            else if (in_quick_check && !line.empty() && std::isdigit(static_cast<unsigned char>(line[0])) && contains(line, ". "))
                ++in_text;
        }
        const std::string quiz = text_of(lesson.lesson_folder / "quiz.json");
        int in_quiz = 0;
        for (std::size_t at = quiz.find("\"question\":"); at != std::string::npos; at = quiz.find("\"question\":", at + 1)) ++in_quiz;
        CHECK(in_text > 0);
        CHECK(in_quiz == in_text);
    }
}

TEST_CASE("watch shows the score table and only the first failed check of check's report") {
    const std::string report =
        "Lesson 1: Device enumeration and selection  (exercises/01-devices/devices.cu)\n\n"
        "  criterion               points          checks\n"
        "  counting                0 / 15          0 of 6 passed\n"
        "  total                   0 / 100\n\n"
        "What to fix\n"
        "counting: 6 of 6 checks failed; read lessons/01-devices/README.md section 1.2 (Counting devices)\n"
        "  x with no driver count_devices gives 0  [none]\n"
        "      count_devices() returns the number of usable devices\n"
        "        expected: 0\n"
        "        observed: -1\n"
        "  x the second failure  [h200]\n"
        "        expected: 1\n"
        "threads: 3 of 3 checks failed; read section 1.11\n"
        "  x a third failure\n\n"
        "Score 0 / 100  (seed 5; repeat this run with --seed 5)\n"
        "0 passed, 30 failed\n";
    const std::string screen = first_screen(report, 1);
    CHECK(contains(screen, "  counting                0 / 15"));
    CHECK(contains(screen, "What to fix first\ncounting: 6 of 6 checks failed; read lessons/01-devices/README.md section 1.2"));
    CHECK(contains(screen, "        observed: -1\n(tools/mgpu check 1 shows every failed check)"));
    CHECK_FALSE(contains(screen, "the second failure"));
    CHECK_FALSE(contains(screen, "a third failure"));
    CHECK(contains(screen, "Score 0 / 100"));
    // Nothing failed, or the code did not build: the whole report.
    CHECK(first_screen("Score 100 / 100\n", 1) == "Score 100 / 100\n");
    CHECK(first_screen("Could not be built\nerror: x\n", 1) == "Could not be built\nerror: x\n");
}
