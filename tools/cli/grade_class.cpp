// `grade-class`: grades every student's folder of a class and writes the gradebook.
#include <filesystem>
#include <iostream>
#include <limits>
#include <tuple>
#include <utility>
#include <unistd.h>

#include "args.h"
#include "command.h"
#include "exit_codes.h"
#include "kit_config.h"
#include "lessons.h"
#include "topology_choice.h"
#include "translate.h"

#if MGPU_HAVE_CHECKER
#include "class_grading.h"
#endif

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// Exit code when some student could not be graded through the kit's fault (README, "Exit codes").
constexpr int kExitKitError = 4;

// "1", "1,3" or "all" (empty: every lesson).
std::vector<int> lesson_list(const std::string& text) {
    if (text == "all") return {};
    std::vector<int> lessons;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        auto number = parse_lesson_number(word);
        if (!number) throw UsageError("'" + word + "' in --lesson is not a lesson number: give N, N,M or all");
        lessons.push_back(*number);
        start = end + 1;
    }
    return lessons;
}

// "I/N": chunk I of N, as a cluster array task numbers them.
std::pair<int, int> part_of(const std::string& text) {
    const auto slash = text.find('/');
    if (slash == std::string::npos) throw UsageError("--part is I/N (chunk I of N, from 1), not '" + text + "'");
    const int parts = static_cast<int>(whole_number("--part", text.substr(slash + 1), 1, 100000));
    const int part = static_cast<int>(whole_number("--part", text.substr(0, slash), 1, static_cast<std::uint64_t>(parts)));
    return {part, parts};
}

#if MGPU_HAVE_CHECKER
int grade_class_command(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError("say which class folder to grade (one folder per student inside)");
    auto lesson = args.value("--lesson");
    if (!lesson) throw UsageError("say which lesson to grade: --lesson N, --lesson N,M or --lesson all");
    ClassGrading settings;
    settings.class_dir = fs::absolute(args.positionals.front()).lexically_normal();
    if (settings.class_dir.filename().empty()) settings.class_dir = settings.class_dir.parent_path();
    settings.lessons = lesson_list(*lesson);
    // Beside the class folder, never inside it: it is not mistaken for a student, and two classes
    // side by side keep their gradebooks apart.
    settings.out_dir = args.value("--out") ? fs::absolute(*args.value("--out")).lexically_normal()
                                           : fs::path(settings.class_dir.string() + "-grades");
    if (auto jobs = args.value("--jobs"))
        settings.jobs = static_cast<int>(whole_number("--jobs", *jobs, 1, std::numeric_limits<int>::max()));
    if (auto seed = args.value("--seed")) settings.seed = whole_number("--seed", *seed, 1);
    if (auto backend = args.value("--backend")) {
        if (*backend != "sim" && *backend != "cuda" && *backend != "auto")
            throw UsageError("--backend is sim, cuda or auto, not '" + *backend + "'");
        settings.backend = *backend;
    }
    if (auto topology = args.value("--topology")) settings.topology = checked_topology(*topology);
    if (auto part = args.value("--part")) std::tie(settings.part, settings.parts) = part_of(*part);
    settings.use_gradebook_cache = !args.has("--no-cache");

    ClassResult result = grade_class(kit, settings);
    std::cout << class_summary(result);
    if (result.any_kit_error()) {
        std::cout << "Some students could not be graded through the kit's fault (rows marked kit error; their "
                     "report.txt says why). Run the same command again to grade just those.\n";
        return kExitKitError;
    }
    return kExitOk;
}
#else
int grade_class_command(const Kit&, const ParsedArgs&) {
    std::cerr << "mgpu: the checker is not part of this build of the kit, so nothing can be graded.\n";
    return kExitSetupProblem;
}
#endif

}  // namespace

const Command grade_class_command_entry = {
    N_("Grading a class"),
    {
        .name = "grade-class",
        .usage = "grade-class CLASS_DIR --lesson N|N,M|all [--out DIR] [--jobs J] [--seed S] [--backend sim|cuda|auto] "
                 "[--part I/N]",
        .summary = N_("Grades every student's folder of a class and writes grades.csv and each student's reports."),
        .description =
            N_("CLASS_DIR holds one folder per student (any name), each laid out as `grade` accepts. Writes\n"
            "OUT/grades.csv (a row per student and lesson: student, lesson, score, max_score, status, then\n"
            "the points of each criterion) and OUT/STUDENT/results.json (Gradescope), junit.xml and\n"
            "report.txt. OUT defaults to CLASS_DIR-grades beside the class folder. A student whose files,\n"
            "lessons, seed and kit are unchanged since the last run is served from OUT/STUDENT/grade-cache.json.\n"
            "Exit codes: 0 every student graded (whatever the scores), 2 a bad option, 4 some student could\n"
            "not be graded through the kit's fault (the rows say kit error; running again grades just those)."),
        .options =
            {
                {"--lesson", "N|N,M|all", N_("the lessons to grade: a row per student and lesson")},
                {"--out", "DIR", N_("where grades.csv and the student folders go (default: CLASS_DIR-grades)")},
                {"--jobs", "J", N_("students graded at once (default: one per core); fewer students than J share "
                                "the rest as test cases run at once")},
                {"--seed", "S", N_("the seed of the random inputs, the same for every student (default 1)")},
                {"--backend", "sim|cuda|auto", N_("as for grade (cuda grades one student at a time unless --jobs)")},
                {"--topology", "NAME|FILE", N_("run only the scenarios on this machine")},
                {"--part", "I/N", N_("grade only chunk I of N of the class and write grades-part-I-of-N.csv "
                                  "(one task of a cluster array job; tools/slurm/)")},
                {"--no-cache", "", N_("grade every student again, even unchanged ones")},
            },
        .max_positionals = 1,
        .examples = "  tools/mgpu grade-class submissions --lesson 3\n"
                    "  tools/mgpu grade-class submissions --lesson 1,3 --out gradebook --seed 7\n",
    },
    grade_class_command,
};

}  // namespace mgpu::cli
