// The CLI in Japanese and in English: --lang, the environment, and lesson 3 gone through with list,
// hint, quiz and watch. The expected Japanese is read from po/ja.po, so these tests hold the CLI to
// its catalog rather than to a copy of the translations. No ja_JP locale is needed (nor generated
// on most test machines): that is part of what is tested.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_invocation.h"
#include "student_kit_copy.h"
#include "test_summary.h"
#include "exit_codes.h"
#include "kit.h"
#include "language.h"
#include "po_catalog.h"
#include "translate.h"
#include "watch_screen.h"

using namespace mgpu::cli;
namespace fs = std::filesystem;

namespace {

const fs::path kSourceRoot = MGPU_TEST_SOURCE_ROOT;

const std::map<std::string, std::string>& japanese() {
    static const auto catalog = read_po(kSourceRoot / "po" / "ja.po");
    return catalog;
}

// The Japanese of an English message; fails the test when the catalog lacks it.
std::string ja(const std::string& english) {
    auto found = japanese().find(english);
    REQUIRE_MESSAGE(found != japanese().end(), "po/ja.po has no entry for: " << english);
    REQUIRE_MESSAGE(!found->second.empty(), "po/ja.po leaves untranslated: " << english);
    return found->second;
}

// The words of a message before its first value ("ヒント {} / {}:" -> "ヒント "), for output
// where the values are not known to the test.
std::string lead(const std::string& text) { return text.substr(0, text.find('{')); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string text_of(const fs::path& file) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The student's commands, run in Japanese or English on a copy of the kit (student_kit_copy.h).
struct KitCopy : StudentKitCopy {
    KitCopy() : StudentKitCopy(kSourceRoot, "mgpu-language") {}
    // `environment` replaces the language settings of the test's own environment, so that a
    // machine set to Japanese runs the English cases in English too.
    CliResult run(const std::string& arguments, const std::string& environment = "", const std::string& input = "") const {
        std::ofstream(root / "stdin.txt") << input;
        return run_cli("--kit-root '" + root.string() + "' " + arguments + " <'" + (root / "stdin.txt").string() + "'",
                       "env -u LANGUAGE -u LC_ALL -u LC_MESSAGES LANG=C.UTF-8 " + environment);
    }
};

nlohmann::json lesson3(const std::string& file) {
    return nlohmann::json::parse(text_of(kSourceRoot / "lessons" / "03-peer-to-peer" / file));
}

}  // namespace

TEST_CASE("--lang is taken from anywhere before --, and languages are read from locale names") {
    std::vector<std::string> args = {"hint", "--lang", "ja", "3", "--", "--lang", "en"};
    CHECK(take_language_option(args) == "ja");
    CHECK(args == std::vector<std::string>{"hint", "3", "--", "--lang", "en"});
    args = {"--lang=en", "list"};
    CHECK(take_language_option(args) == "en");
    CHECK(args == std::vector<std::string>{"list"});
    args = {"list"};
    CHECK_FALSE(take_language_option(args).has_value());
    args = {"list", "--lang"};
    CHECK_THROWS_AS(take_language_option(args), UsageError);

    CHECK(language_code("ja_JP.UTF-8") == "ja");
    CHECK(language_code("ja") == "ja");
    CHECK(language_code("en_GB.UTF-8") == "en");
    CHECK(language_code("C.UTF-8") == "en");
    CHECK_FALSE(language_code("fr_FR.UTF-8").has_value());
}

TEST_CASE("list speaks Japanese with --lang ja and with LANG=ja_JP.UTF-8, English with --lang en") {
    KitCopy kit;
    const std::string title =
        nlohmann::json::parse(text_of(kSourceRoot / "checker" / "lessons" / "03-peer-to-peer" / "lesson.json"))["title"];
    for (const std::string& how : {std::string("--lang ja list"), std::string("list --lang=ja")}) {
        CAPTURE(how);
        const CliResult result = kit.run(how);
        CHECK(result.code == 0);
        CHECK(contains(result.output, ja("Last check")));
        CHECK(contains(result.output, ja("not checked yet")));
        CHECK(contains(result.output, ja(title)));
    }
    // No ja_JP locale needs to exist on the machine for this.
    const CliResult from_environment = kit.run("list", "LANG=ja_JP.UTF-8");
    CHECK(contains(from_environment.output, ja("Last check")));
    CHECK(contains(kit.run("list", "LANGUAGE=ja").output, ja("Last check")));

    const CliResult english = kit.run("--lang en list", "LANG=ja_JP.UTF-8");
    CHECK(contains(english.output, "Last check"));
    CHECK(contains(english.output, title));
    CHECK_FALSE(contains(english.output, ja("Last check")));
    CHECK(contains(kit.run("list").output, "not checked yet"));

    const CliResult unknown = kit.run("--lang xx list");
    CHECK(unknown.code == kExitSetupProblem);
    CHECK(contains(unknown.output, "--lang is ja"));
}

TEST_CASE("help and usage errors are in Japanese with --lang ja") {
    KitCopy kit;
    const CliResult overview = kit.run("help --lang ja");
    CHECK(overview.code == 0);
    CHECK(contains(overview.output, ja("Lists the commands, or explains one.")));
    CHECK(contains(overview.output, ja("Working on an exercise")));
    const CliResult hint_help = kit.run("--lang ja hint --help");
    CHECK(contains(hint_help.output, ja("Usage:")));
    CHECK(contains(hint_help.output, ja("Shows one more hint for a TODO of a lesson (the first TODO not yet written by default).")));
    const CliResult missing = kit.run("--lang ja quiz");
    CHECK(missing.code == kExitSetupProblem);
    CHECK(contains(missing.output, ja("say which lesson's quiz to take, e.g. tools/mgpu quiz 1")));
    CHECK(contains(kit.run("--lang en help").output, "Lists the commands, or explains one."));
}

TEST_CASE("hint 3 shows lesson 3's task and hints from the catalog, in either language") {
    KitCopy kit;
    const nlohmann::json todo = lesson3("hints.json")["todos"][1];  // TODO(2)
    const std::string task = todo["task"], first_hint = todo["hints"][0];
    const CliResult result = kit.run("--lang ja hint 3 " + todo["todo"].get<std::string>());
    CHECK(result.code == 0);
    CHECK(contains(result.output, ja(task)));
    CHECK(contains(result.output, lead(ja("Hint {} of {}:"))));
    // The hint is wrapped at spaces for the terminal: compare its first words.
    CHECK(contains(result.output, ja(first_hint).substr(0, ja(first_hint).find(' '))));
    CHECK(contains(result.output, lead(ja("Still stuck? tools/mgpu hint {} {} shows hint {}."))));

    const CliResult english = kit.run("--lang en hint 3 " + todo["todo"].get<std::string>());
    CHECK(contains(english.output, task));
    CHECK(contains(english.output, "(hint 1 of"));
    CHECK(contains(english.output, "Hint 2 of"));
    CHECK_FALSE(contains(english.output, ja(task)));
}

TEST_CASE("quiz 3 asks lesson 3's questions from the catalog and scores the answers on standard input") {
    KitCopy kit;
    const nlohmann::json questions = lesson3("quiz.json")["questions"];
    std::string answers;
    for (const auto& question : questions) answers += std::string(1, static_cast<char>('a' + question["answer"].get<int>())) + "\n";
    const CliResult result = kit.run("--lang ja quiz 3", "", answers);
    CHECK(result.code == 0);
    for (const auto& question : questions) {
        CHECK(contains(result.output, ja(question["question"])));
        CHECK(contains(result.output, ja(question["choices"][0])));
        CHECK(contains(result.output, ja(question["explanation"])));
    }
    CHECK(contains(result.output, ja("Right.")));
    CHECK(contains(result.output, mgpu::fill(ja("Score: {} / {}."), questions.size(), questions.size())));
    CHECK(contains(kit.run("--lang ja list").output, std::to_string(questions.size()) + " / " + std::to_string(questions.size())));

    const CliResult english = kit.run("quiz 3", "", answers);
    CHECK(contains(english.output, questions[0]["question"].get<std::string>()));
    CHECK(contains(english.output, "Score: " + std::to_string(questions.size())));
}

TEST_CASE("watch 3 passes --lang ja on to the check it runs") {
    // The copy has no rubric, so the check fails at once with the checker's exit code 4: what is
    // tested is that both watch and the check it started speak Japanese.
    KitCopy kit;
    const fs::path output = kit.root / "watch.out";
    const fs::path file = kit.root / "exercises" / "03-peer-to-peer" / "peer_access.cu";
    const pid_t watcher = ::fork();
    REQUIRE(watcher >= 0);
    if (watcher == 0) {
        const std::string command = "exec env -u LANGUAGE -u LC_ALL LANG=C.UTF-8 '" MGPU_CLI_EXE "' --kit-root '" +
                                    kit.root.string() + "' --lang ja watch 3 --once-after-change --no-clear >'" +
                                    output.string() + "' 2>&1 </dev/null";
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    const std::string watching = mgpu::fill(ja("Watching {} in {}: save to check again, Ctrl-C to stop."), "peer_access.cu",
                                            (kit.root / "exercises" / "03-peer-to-peer").string());
    for (int i = 0; i < 100 && !contains(text_of(output), watching); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const fs::path saved = file.string() + ".swp";
    std::ofstream(saved) << text_of(file) << "// saved\n";
    fs::rename(saved, file);
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
    const std::string text = text_of(output);
    CHECK(contains(text, watching));
    CHECK(contains(text, ja("The checker could not run: ")));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 4);
}

TEST_CASE("watch finds the first failing check in a Japanese report") {
    // This process speaks Japanese for the length of the test, as a watch started with --lang ja.
    choose_language("ja", Kit::configured().build / "po");
    const std::string report = mgpu::fill(ja("Lesson {}: {}"), 3, ja("Peer-to-peer memory access")) + "\n\n" +
                               "  " + ja("peer checks") + "   0 / 20   " + mgpu::fill(ja("{} of {} passed"), 0, 4) + "\n\n" +
                               ja("What to fix") + "\n" + ja("peer checks") + ": " + mgpu::fill(ja("{} of {} checks failed"), 4, 4) +
                               "\n  x can_reach of a device and itself\n        expected: false\n"
                               "  x the second failure\n\n" +
                               ja("Score") + " 0 / 100  " + mgpu::fill(ja("(seed {}; repeat this run with --seed {})"), 5, 5) + "\n";
    const std::string screen = first_screen(report, 3);
    choose_language("en", Kit::configured().build / "po");
    CHECK(contains(screen, ja("What to fix first") + "\n" + ja("peer checks") + ": "));
    CHECK(contains(screen, "expected: false\n" + mgpu::fill(ja("(tools/mgpu check {} shows every failed check)"), 3)));
    CHECK_FALSE(contains(screen, "the second failure"));
    CHECK(contains(screen, ja("Score") + " 0 / 100"));
}

TEST_CASE("topo's machine table speaks Japanese with --lang ja, and English as the simulator writes it") {
    KitCopy kit;
    const CliResult result = kit.run("--lang ja topo --topology islands-2x2");
    CHECK(result.code == 0);
    CHECK(contains(result.output, ja("Links (as nvidia-smi topo -m shows them):")));
    CHECK(contains(result.output, ja("Legend:")));
    CHECK(contains(result.output, "  GPU0  X     NV18  SYS   SYS\n"));   // nvidia-smi's labels stay as they are
    const CliResult english = kit.run("topo --topology islands-2x2");
    CHECK(contains(english.output, "Links (as nvidia-smi topo -m shows them):"));
    CHECK_FALSE(contains(english.output, ja("Legend:")));
}

TEST_CASE("test's tally is Japanese but for its last line, which stays 'N passed, N failed'") {
    choose_language("ja", Kit::configured().build / "po");
    const SuiteTally result = tally({{"runtime", "FAIL", 1, "[doctest] test cases: 5 | 3 passed | 2 failed | 0 skipped\n"},
                                     {"cuda-only", "SKIP", 77, ""}});
    const std::string text = tally_report(result);
    choose_language("en", Kit::configured().build / "po");
    CHECK(contains(text, ja("Test programs that failed (their output is above):")));
    CHECK(contains(text, "runtime: " + mgpu::fill(ja("{} test cases failed"), 2)));
    CHECK(contains(text, mgpu::fill(ja("{} test program skipped itself (exit code 77)"), 1)));
    CHECK(text.substr(text.rfind('\n', text.size() - 2) + 1) == "3 passed, 2 failed\n");
}

TEST_CASE("bench and validate speak Japanese on the terminal; validate's report file stays English") {
    KitCopy kit;
    CHECK(contains(kit.run("--lang ja bench").output, ja("Benches (run one with tools/mgpu bench NAME):")));
    const fs::path report = kit.root / "validation.md";
    const CliResult result =
        kit.run("--lang ja validate --real-side sim --quick --gpus 2 --only machine --out '" + report.string() + "'");
    CHECK(result.code == 0);
    CHECK(contains(result.output, "== " + ja("Machine") + " =="));
    CHECK(contains(result.output, mgpu::fill(ja("GPUs used: {}"), 2)));
    CHECK(contains(result.output, ja("Links (as nvidia-smi topo -m shows them):")));
    // The summary line is read by scripts: English, and the file's last line too.
    CHECK(contains(result.output, "\nvalidate: PASS - "));
    const std::string file = text_of(report);
    CHECK(contains(file, "## Machine\n"));
    CHECK(contains(file, "GPUs used: 2"));
    CHECK(contains(file, "Links (as nvidia-smi topo -m shows them):"));
    CHECK_FALSE(contains(file, ja("Machine")));
    CHECK(contains(file, "\nvalidate: PASS - "));
}
