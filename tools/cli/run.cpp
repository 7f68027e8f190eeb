#include <csignal>
#include <filesystem>
#include <iostream>
#include <regex>
#include <unistd.h>

#include "command.h"
#include "exit_codes.h"
#include "process.h"
#include "program_build.h"
#include "topology_choice.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

void check_schedule(const std::string& text) {
    static const std::regex valid("eager|lazy|shuffle:[0-9]+");
    if (!std::regex_match(text, valid))
        throw UsageError("'" + text + "' is not a schedule; use eager, lazy or shuffle:SEED (SEED a whole number)");
}

void report_ending(const ExitStatus& status) {
    if (status.signal == 0 || status.signal == SIGINT) return;
    std::cerr << "mgpu run: the program was stopped by " << status.describe() << ".\n";
    if (status.signal == SIGSEGV)
        std::cerr << "hint: host code touched memory it may not: a null or freed pointer, or device memory read "
                     "from the host (copy it back with cudaMemcpy first).\n";
}

int run(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) throw UsageError("say what to run: a .cu file, a folder, or a lesson number");
    SpawnOptions options;
    if (auto topology = args.value("--topology"))
        options.environment.emplace_back("MGPU_TOPOLOGY", checked_topology(*topology));
    if (auto schedule = args.value("--schedule")) {
        check_schedule(*schedule);
        options.environment.emplace_back("MGPU_SCHEDULE", *schedule);
    }
    fs::path trace_file;
    if (auto trace = args.value("--trace")) {
        trace_file = fs::absolute(*trace);
        std::error_code ignored;
        fs::remove(trace_file, ignored);  // so that a file found afterwards is this run's
        options.environment.emplace_back("MGPU_TRACE_FILE", trace_file.string());
    }

    ProgramSources sources = program_sources(kit, args.positionals.front());
    BuiltProgram program = build_program(kit, sources, [&] {
        if (::isatty(STDERR_FILENO)) std::cerr << "mgpu run: building " << sources.label << " ...\n";
    });
    if (!program.ok) {
        std::cerr << program.diagnostics << "\nhint: " << program.hint << "\nmgpu run: " << sources.label
                  << " did not build.\n";
        return kExitFailed;
    }
    if (!program.diagnostics.empty()) std::cerr << program.diagnostics;

    std::vector<std::string> argv = {program.executable.string()};
    argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
    ExitStatus status = run_process(argv, options);
    report_ending(status);
    if (!trace_file.empty()) {
        if (fs::exists(trace_file))
            std::cerr << "mgpu run: timeline written to " << trace_file.string()
                      << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
        else
            std::cerr << "mgpu run: no timeline was written to " << trace_file.string()
                      << ": the program ended before the simulator could save it.\n";
    }
    return status.shell_code();
}

}  // namespace

const Command run_command = {
    "Working on an exercise",
    {
        .name = "run",
        .usage = "run FILE.cu|FOLDER|LESSON [--topology NAME|FILE] [--schedule eager|lazy|shuffle:SEED] "
                 "[--trace FILE.json] [-- ARGS]",
        .summary = "Builds a CUDA program for the simulated multi-GPU machine and runs it.",
        .description =
            "A lesson number (3) builds every .cu file of its exercise folder (exercises/03-*/); a folder\n"
            "builds the .cu files in it; a file builds that file alone. The program's exit code is passed\n"
            "through. Builds are cached in build/run-cache, so an unchanged program starts at once.",
        .options =
            {
                {"--topology", "NAME|FILE", "the simulated machine: a preset (tools/mgpu topo --list) or a JSON file"},
                {"--schedule", "MODE", "eager (default), lazy, or shuffle:SEED to run independent streams in a "
                                       "seeded random order"},
                {"--trace", "FILE.json", "write the timeline of API calls and device work (Chrome trace format)"},
            },
        .max_positionals = 1,
        .takes_passthrough = true,
        .examples = "  tools/mgpu run 3\n"
                    "  tools/mgpu run samples/simple-p2p/simple_p2p.cu --topology islands-2x2\n"
                    "  tools/mgpu run 3 --schedule shuffle:7 --trace timeline.json -- --size 1024\n",
    },
    run,
};

}  // namespace mgpu::cli
