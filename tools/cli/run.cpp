#include <csignal>
#include <filesystem>
#include <iostream>
#include <regex>
#include <unistd.h>

#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "command.h"
#include "exit_codes.h"
#include "lessons.h"
#include "process.h"
#include "program_build.h"
#include "run.h"
#include "run_findings.h"
#include "topology_choice.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

void check_schedule(const std::string& text) {
    static const std::regex valid("eager|lazy|shuffle:[0-9]+");
    if (!std::regex_match(text, valid))
        throw UsageError(fill(tr("'{}' is not a schedule; use eager, lazy or shuffle:SEED (SEED a whole number)"), text));
}

void report_ending(const ExitStatus& status, const std::string& prefix) {
    if (status.signal == 0 || status.signal == SIGINT) return;
    std::cerr << prefix << fill(tr("the program was stopped by {}."), status.describe()) << "\n";
    if (status.signal == SIGSEGV)
        std::cerr << "hint: "
                  << tr("host code touched memory it may not: a null or freed pointer, or device memory read from the "
                        "host (copy it back with cudaMemcpy first).")
                  << "\n";
}

// How a lesson's driver is run (checker/lessons/NN-*/lesson.json, "run"): the machine it shows
// most on, what else is worth a try once it passes, and the sections findings point to.
struct LessonRun {
    int number = 0;
    std::string topology;
    std::vector<std::string> also_try;
    FindingSections sections;
};

// A lesson number, or a folder named as a lesson's exercise folder (a copy of exercises/03-peer-to-peer
// elsewhere): both run as that lesson's driver.
std::optional<int> lesson_of_target(const Kit& kit, const std::string& target) {
    std::error_code error;
    if (!fs::exists(target, error)) return parse_lesson_number(target);
    if (!fs::is_directory(target, error)) return std::nullopt;
    fs::path folder_path = fs::absolute(target).lexically_normal();
    if (folder_path.filename().empty()) folder_path = folder_path.parent_path();   // "03-peer-to-peer/"
    const std::string name = folder_path.filename().string();
    const auto dash = name.find('-');
    if (dash == std::string::npos) return std::nullopt;
    auto number = parse_lesson_number(name.substr(0, dash));
    if (!number) return std::nullopt;
    auto folder = lesson_folder(kit.root / "exercises", *number);
    if (!folder || folder->filename().string() != name) return std::nullopt;
    return number;
}

LessonRun lesson_run(const Kit& kit, const std::string& target) {
    LessonRun lesson;
    auto number = lesson_of_target(kit, target);
    if (!number) return lesson;
    auto folder = lesson_folder(kit.root / "checker" / "lessons", *number);
    if (!folder) return lesson;
    std::ifstream in(*folder / "lesson.json");
    const nlohmann::json data = nlohmann::json::parse(in, nullptr, false);
    if (data.is_discarded() || !data.contains("run")) return lesson;
    const nlohmann::json& run = data["run"];
    lesson.number = *number;
    lesson.topology = run.value("topology", "");
    lesson.also_try = run.value("also_try", std::vector<std::string>{});
    lesson.sections = run.value("sections", FindingSections{});
    return lesson;
}

void suggest_next(const LessonRun& lesson, const std::string& machine, const std::string& schedule) {
    std::cerr << "mgpu run: " << fill(tr("no problem found on {0} with the {1} schedule."), machine, schedule);
    if (!lesson.also_try.empty()) {
        std::cerr << " " << tr("Other machines and schedules can show what this one hides:") << "\n";
        const bool shuffled = schedule.rfind("shuffle", 0) == 0;
        for (const auto& options : lesson.also_try) {
            const bool this_run = options == "--topology " + machine || options == "--schedule " + schedule ||
                                  (shuffled && options.rfind("--schedule shuffle", 0) == 0);
            if (!this_run) std::cerr << "  tools/mgpu run " << lesson.number << " " << options << "\n";
        }
        std::cerr << fill(tr("then grade it: tools/mgpu check {}"), lesson.number) << "\n";
    } else {
        std::cerr << "\n";
    }
}

}  // namespace

CompileOptions compile_options_of(const ParsedArgs& args) {
    CompileOptions compile_options;
    for (const auto& folder : args.all("-I")) {
        std::error_code error;
        if (!fs::is_directory(folder, error)) throw UsageError(fill(tr("-I {}: there is no such folder"), folder));
        compile_options.include_dirs.push_back(fs::absolute(folder).lexically_normal());
    }
    for (const auto& define : args.all("-D")) {
        static const std::regex macro("[A-Za-z_][A-Za-z0-9_]*(=.*)?");
        if (!std::regex_match(define, macro))
            throw UsageError(fill(tr("-D {}: give a macro as NAME or NAME=VALUE"), define));
        compile_options.defines.push_back(define);
    }
    return compile_options;
}

RunOutcome run_program(const Kit& kit, const ParsedArgs& args, const RunSetup& setup) {
    const std::string prefix = "mgpu " + setup.command + ": ";
    if (args.positionals.empty()) throw UsageError(tr("say what to run: .cu files, a folder, or a lesson number"));
    const LessonRun lesson = args.positionals.size() == 1 ? lesson_run(kit, args.positionals.front()) : LessonRun{};
    SpawnOptions options;
    options.environment = setup.environment;
    std::string machine = "h200", schedule_name = "eager";
    if (auto topology = args.value("--topology")) {
        options.environment.emplace_back("MGPU_TOPOLOGY", checked_topology(*topology));
        machine = *topology;
    } else if (!lesson.topology.empty()) {
        options.environment.emplace_back("MGPU_TOPOLOGY", checked_topology(lesson.topology));
        machine = lesson.topology;
    }
    if (auto schedule = args.value("--schedule")) {
        check_schedule(*schedule);
        options.environment.emplace_back("MGPU_SCHEDULE", *schedule);
        schedule_name = *schedule;
    }
    const fs::path report_file = kit.build / "run-reports" / (std::to_string(::getpid()) + ".json");
    {
        std::error_code ignored;
        fs::create_directories(report_file.parent_path(), ignored);
        fs::remove(report_file, ignored);
    }
    options.environment.emplace_back("MGPU_RUN_REPORT", report_file.string());
    // The program's own timers read the modelled machine's time (tools/sim/src/runtime/program_clock.h),
    // unless the caller chose otherwise.
    if (std::getenv("MGPU_PROGRAM_CLOCK") == nullptr) options.environment.emplace_back("MGPU_PROGRAM_CLOCK", "modelled");
    fs::path trace_file;
    if (auto trace = args.value("--trace")) {
        trace_file = fs::absolute(*trace);
        std::error_code ignored;
        fs::remove(trace_file, ignored);  // so that a file found afterwards is this run's
        options.environment.emplace_back("MGPU_TRACE_FILE", trace_file.string());
    }

    ProgramSources sources = program_sources(kit, args.positionals);
    const CompileOptions compile_options = compile_options_of(args);
    BuiltProgram program = build_program(kit, sources, compile_options, [&] {
        if (::isatty(STDERR_FILENO)) std::cerr << prefix << fill(tr("building {} ..."), sources.label) << "\n";
    });
    if (!program.ok) {
        std::cerr << program.diagnostics << "\nhint: " << program.hint << "\n" << prefix
                  << fill(tr("{} did not build."), sources.label) << "\n";
        return {kExitFailed, machine, schedule_name, sources.label, false};
    }
    if (!program.diagnostics.empty()) std::cerr << program.diagnostics;

    std::vector<std::string> argv = {program.executable.string()};
    argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
    if (!lesson.topology.empty() && !args.value("--topology"))
        std::cerr << prefix
                  << fill(tr("on {}, the machine this lesson's driver shows most on (--topology NAME for another)"), machine)
                  << "\n";
    ExitStatus status = run_process(argv, options);
    report_ending(status, prefix);
    const RunFindings findings = read_run_findings(report_file, lesson.sections, lesson.number);
    {
        std::error_code ignored;
        fs::remove(report_file, ignored);
    }
    if (findings.count > 0) {
        std::cerr << "\n" << prefix
                  << fill(tr(findings.count == 1
                                 ? N_("the simulator saw {0} problem the program's own checks may not show ({1}, {2} schedule):")
                                 : N_("the simulator saw {0} problems the program's own checks may not show ({1}, {2} schedule):")),
                          findings.count, machine, schedule_name)
                  << "\n" << findings.text;
        // An exercise's run fails on what its checks would fail; any other program keeps the exit code
        // it would have on a real GPU unless asked, as a sanitizer does.
        const bool exercise = lesson.number > 0;
        const bool fail = args.has("--fail-on-findings") || (exercise && !args.has("--keep-exit-code"));
        if (status.ok() && fail) {
            std::cerr << prefix
                      << (exercise && !args.has("--fail-on-findings")
                              ? tr("the program ended with 0, but these problems make the run fail (exit code 1; "
                                   "--keep-exit-code reports them without failing).")
                              : tr("the program ended with 0, but with --fail-on-findings these problems make the run "
                                   "fail (exit code 1)."))
                      << "\n";
            return {kExitFailed, machine, schedule_name, sources.label, true};
        }
        if (status.ok() && exercise) {
            std::cerr << prefix << tr("the program ended with 0; with --keep-exit-code these problems are reported only.")
                      << "\n";
        } else if (status.ok()) {
            std::cerr << prefix
                      << tr("the program's exit code 0 is kept, as on a real GPU; --fail-on-findings makes these "
                            "problems fail the run.")
                      << "\n";
        }
    } else if (status.ok() && lesson.number > 0 && setup.suggest_next) {
        suggest_next(lesson, machine, schedule_name);
    }
    if (!trace_file.empty()) {
        if (fs::exists(trace_file))
            std::cerr << prefix
                      << fill(tr("trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)"),
                              trace_file.string())
                      << "\n";
        else
            std::cerr << prefix
                      << fill(tr("no trace was written to {}: the program ended before the simulator could save it."),
                              trace_file.string())
                      << "\n";
    }
    return {status.shell_code(), machine, schedule_name, sources.label, true};
}

namespace {

int run(const Kit& kit, const ParsedArgs& args) { return run_program(kit, args, RunSetup{}).exit_code; }

}  // namespace

const Command run_command = {
    N_("Working on an exercise"),
    {
        .name = "run",
        .usage = "run FILE.cu...|FOLDER|LESSON [-I DIR]... [-D NAME[=VALUE]]... [--topology NAME|FILE] "
                 "[--schedule eager|lazy|shuffle:SEED] [--trace FILE.json] [-- ARGS]",
        .summary = N_("Builds a CUDA program for the simulated multi-GPU machine and runs it."),
        .description = N_(
            "A lesson number (3) builds every .cu file of its exercise folder (exercises/03-*/) and runs it on\n"
            "the machine that lesson's driver shows most on; a folder builds the .cu and .cpp files in it;\n"
            "files named one by one are built into one program, as a CMake target lists its sources\n"
            "(.cu files as nvcc builds them, .cpp files as the host compiler does; -I and -D as for both;\n"
            "OpenMP is always on). After the program's own output, run lists what the simulator saw:\n"
            "data races between streams, device work still running when the program ended, and streams,\n"
            "events and memory never released, each at the line that caused it. The program's exit code is\n"
            "passed through, as on a real GPU, except that an exercise (a lesson number, or a lesson's\n"
            "folder) ending with 0 despite such problems gives 1, as check would fail it (--keep-exit-code\n"
            "keeps its 0; --fail-on-findings gives 1 for any program). The program's own timers\n"
            "(std::chrono, clock_gettime, gettimeofday, omp_get_wtime) read the modelled machine's time:\n"
            "its CUDA calls as modelled plus the real time of its own code (MGPU_PROGRAM_CLOCK=real for\n"
            "the simulator's real time). Builds are cached in build/run-cache, so an unchanged program\n"
            "starts at once."),
        .options =
            {
                {"-I", "DIR", N_("search DIR for included headers (cuda-samples' Common/, say); repeatable"), true},
                {"-D", "NAME[=VALUE]", N_("define a macro for every file, as nvcc -D does; repeatable"), true},
                {"--topology", "NAME|FILE", N_("the simulated machine: a preset (tools/mgpu topo --list) or a JSON file")},
                {"--schedule", "MODE", N_("eager (default), lazy, or shuffle:SEED to run independent streams in a "
                                       "seeded random order")},
                {"--trace", "FILE.json", N_("write the trace of API calls and device work (Chrome trace format; "
                                          "tools/mgpu timeline draws the run as a web page)")},
                {"--keep-exit-code", "", N_("for an exercise: pass its exit code through even when the simulator saw "
                                         "races or leaks")},
                {"--fail-on-findings", "", N_("for any program: answer 1 when it ended with 0 but the simulator saw "
                                           "races, unfinished work or leaks (for scripts and CI)")},
            },
        .max_positionals = -1,
        .takes_passthrough = true,
        .examples = "  tools/mgpu run 3\n"
                    "  tools/mgpu run samples/simple-p2p/simple_p2p.cu --topology islands-2x2\n"
                    "  tools/mgpu run 3 --schedule shuffle:7 --trace timeline.json -- --size 1024\n"
                    "  tools/mgpu run simpleMultiGPU.cu -I ../../../Common --topology pcie-4\n"
                    "  tools/mgpu run main.cu kernels.cu util.cpp -I include -D USE_PINNED=1\n",
    },
    run,
};

}  // namespace mgpu::cli
