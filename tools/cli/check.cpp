// `check` and `grade` hand over to the checker's judge, which builds the code, runs each test
// case in its own sandboxed process and scores it by the lesson's rubric.
#include <filesystem>
#include <iostream>
#include <limits>
#include <unistd.h>

#include "args.h"
#include "check_record.h"
#include "command.h"
#include "exit_codes.h"
#include "kit_config.h"
#include "lessons.h"
#include "progress.h"
#include "topology_choice.h"
#include "translate.h"

#if MGPU_HAVE_CHECKER
#include "grade.h"
#endif

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

struct GradeChoice {
    fs::path submission;
    int lesson = 0;  // 0: every lesson the submission has
    std::string json_out, junit_out, topology, backend = "sim";
    std::string timeline_dir;   // where failed overlap and ordering cases leave their timelines
    std::uint64_t seed = 0;
    int jobs = 0;
    bool quiet = false;
    bool all = false;
};

int lesson_number(const std::string& text) {
    auto number = parse_lesson_number(text);
    if (!number) throw UsageError(fill(tr("'{}' is not a lesson number (1, 2, 3, ...)"), text));
    return *number;
}

// The options check and grade share.
void read_common(const ParsedArgs& args, GradeChoice& choice) {
    if (auto topology = args.value("--topology")) choice.topology = checked_topology(*topology);
    if (auto backend = args.value("--backend")) {
        if (*backend != "sim" && *backend != "cuda" && *backend != "auto")
            throw UsageError(fill(tr("--backend is sim, cuda or auto, not '{}'"), *backend));
        choice.backend = *backend;
    }
    if (auto seed = args.value("--seed")) choice.seed = whole_number("--seed", *seed);
    choice.json_out = args.value("--json").value_or("");
    choice.junit_out = args.value("--junit").value_or("");
    if (auto jobs = args.value("--jobs"))
        choice.jobs = static_cast<int>(whole_number("--jobs", *jobs, 0, std::numeric_limits<int>::max()));
    choice.all = args.has("--all");
}

#if MGPU_HAVE_CHECKER
int hand_to_judge(const Kit& kit, const GradeChoice& choice) {
    judge::GradeRequest request;
    request.kit_root = kit.root.string();
    request.submission_dir = fs::absolute(choice.submission).lexically_normal().string();
    request.lesson = choice.lesson;
    request.json_out = choice.json_out.empty() ? "" : fs::absolute(choice.json_out).string();
    request.junit_out = choice.junit_out.empty() ? "" : fs::absolute(choice.junit_out).string();
    request.topology = choice.topology;
    request.backend = choice.backend;
    request.quiet = choice.quiet;
    request.show_all = choice.all;
    request.jobs = choice.jobs;
    request.seed = choice.seed;
    request.cache_dir = (kit.build / "checker-cache").string();
    request.lessons_build_dir = (kit.build / "checker" / "lessons").string();
    request.timeline_dir = choice.timeline_dir;
    request.color = ::isatty(STDOUT_FILENO);
    return judge::run_grade_command(request);
}
#else
int hand_to_judge(const Kit&, const GradeChoice&) {
    std::cerr << "mgpu: the checker is not part of this build of the kit, so nothing can be graded.\n"
                 "tools/mgpu run LESSON still builds and runs an exercise on the simulated machine.\n";
    return kExitSetupProblem;
}
#endif

int check(const Kit& kit, const ParsedArgs& args) {
    GradeChoice choice;
    choice.submission = kit.root / "exercises";
    if (!args.positionals.empty()) {
        choice.lesson = lesson_number(args.positionals.front());
        if (!lesson_folder(choice.submission, choice.lesson))
            throw UsageError(no_such_lesson(choice.submission, choice.lesson));
    }
    read_common(args, choice);
    choice.timeline_dir = (state_folder(kit) / "timelines").string();
    // The result is always written as results.json too, for `list` and `watch` to read back; where the
    // student asked for --json, that file serves.
    const bool own_results_file = choice.json_out.empty();
    if (own_results_file) {
        std::error_code unwritable;  // a read-only kit is still graded, only not remembered
        fs::create_directories(state_folder(kit), unwritable);
        if (!unwritable) {
            choice.json_out = (state_folder(kit) / "last-check.json").string();
            fs::remove(choice.json_out, unwritable);
        }
    }
    const int code = hand_to_judge(kit, choice);
    try {
        if (!choice.json_out.empty() && fs::exists(choice.json_out)) record_check_results(kit, choice.json_out);
    } catch (const std::exception& error) {
        // The grade stands; only `list` and `watch` miss it.
        std::cerr << "mgpu check: the score was not recorded for tools/mgpu list: " << error.what() << "\n";
    }
    return code;
}

int grade(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError("say which submission folder to grade");
    GradeChoice choice;
    choice.submission = args.positionals.front();
    if (!fs::is_directory(choice.submission))
        throw UsageError("there is no folder '" + choice.submission.string() + "'");
    if (auto lesson = args.value("--lesson")) choice.lesson = lesson_number(*lesson);
    choice.quiet = args.has("--quiet");
    read_common(args, choice);
    choice.timeline_dir = (kit.build / "grade-timelines" / fs::absolute(choice.submission).lexically_normal().filename()).string();
    return hand_to_judge(kit, choice);
}

const OptionSpec kTopologyOption = {"--topology", "NAME|FILE",
                                    N_("run only the scenarios on this machine, instead of the lesson's set")};
const OptionSpec kBackendOption = {"--backend", "sim|cuda|auto",
                                   N_("sim (the default): the simulated machine; cuda: the NVIDIA GPUs here, skipping "
                                   "scenarios they cannot host; auto: cuda when a GPU is present, else sim")};
const OptionSpec kSeedOption = {"--seed", "N", N_("the seed of the random inputs (each report prints the one it used)")};

const OptionSpec kJsonOption = {"--json", "FILE", N_("also write the result as Gradescope's results.json")};
const OptionSpec kJunitOption = {"--junit", "FILE", N_("also write the result as JUnit XML")};
const OptionSpec kJobsOption = {"--jobs", "N", N_("test cases run at once (default: one per core)")};
const OptionSpec kAllOption = {"--all", "", N_("show every failed check (by default the first few of each criterion)")};

}  // namespace

const Command check_command = {
    N_("Working on an exercise"),
    {
        .name = "check",
        .usage = "check [LESSON] [--all] [--json FILE] [--junit FILE] [--topology NAME|FILE] [--backend sim|cuda|auto] "
                 "[--seed N]",
        .summary = N_("Grades your exercises (all lessons, or one) and shows the score per criterion."),
        .description = N_("Grades the files in exercises/ exactly as `grade` grades a submission, and keeps each\n"
                          "lesson's score and first failed check in .mgpu/progress.json for `list` and `watch`.\n"
                          "Exit codes: 0 every check passed, 1 some checks failed, 2 a bad option, 3 the code could not be\n"
                          "built (compile error, missing file), 4 the kit itself failed."),
        .options = {kAllOption, kJsonOption, kJunitOption, kTopologyOption, kBackendOption, kSeedOption, kJobsOption},
        .max_positionals = 1,
        .examples = "  tools/mgpu check\n  tools/mgpu check 3\n",
    },
    check,
};

const Command grade_command = {
    N_("Grading a class"),
    {
        .name = "grade",
        .usage = "grade DIR [--lesson N] [--json FILE] [--junit FILE] [--topology NAME|FILE] [--backend sim|cuda|auto]",
        .summary = N_("Grades a submission folder and writes the reports course platforms read."),
        .description = N_("DIR holds the student's lesson folders as exercises/ does (03-peer-to-peer/...),\n"
                          "or is one lesson's folder. Each test case runs in its own sandboxed process.\n"
                          "Exit codes: 0 every check passed, 1 some checks failed, 2 a bad option, 3 the code could not be\n"
                          "built (compile error, missing file), 4 the kit itself failed."),
        .options =
            {
                {"--lesson", "N", N_("grade this lesson only")},
                kJsonOption,
                kJunitOption,
                kTopologyOption,
                kBackendOption,
                kSeedOption,
                kJobsOption,
                kAllOption,
                {"--quiet", "", N_("print only the totals")},
            },
        .max_positionals = 1,
        .examples = "  tools/mgpu grade submissions/alice --lesson 3 --json results.json --junit alice.xml\n",
    },
    grade,
};

}  // namespace mgpu::cli
