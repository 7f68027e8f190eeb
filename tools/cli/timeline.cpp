// `timeline`: runs a program as `run` does and draws what ran (every device's streams, copy
// engines and links, the host's waits and the event waits) as one HTML page with SVG.
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "command.h"
#include "exit_codes.h"
#include "process.h"
#include "program_build_gpu.h"
#include "program_sources.h"
#include "run.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// The program built with nvcc and run on this machine's GPUs, traced by CUPTI.
int timeline_on_gpus(const Kit& kit, const ParsedArgs& args, const fs::path& out, const std::string& title) {
    for (const char* option : {"--topology", "--schedule"})
        if (args.value(option))
            throw UsageError(fill(tr("{} chooses the simulated machine; with --backend cuda the program runs on this "
                                     "machine's GPUs"), option));
    const ProgramSources sources = program_sources(kit, args.positionals);
    const CompileOptions compile_options = compile_options_of(args);
    const fs::path folder = kit.build / "gpu-builds" / std::to_string(::getpid());
    struct RemoveOnExit {
        fs::path folder;
        ~RemoveOnExit() {
            std::error_code ignored;
            fs::remove_all(folder, ignored);
        }
    } cleanup{folder};
    std::cerr << "mgpu timeline: " << fill(tr("building {} with nvcc for this machine's GPUs ..."), sources.label) << "\n";
    const BuiltProgram program = build_program_for_gpus(kit, sources, compile_options, folder);
    if (!program.ok) {
        std::cerr << program.diagnostics << "\nhint: " << program.hint << "\nmgpu timeline: "
                  << fill(tr("{} did not build with nvcc."), sources.label) << "\n";
        return kExitFailed;
    }
    if (!program.diagnostics.empty()) std::cerr << program.diagnostics;
    SpawnOptions options;
    options.environment = {{"MGPU_TIMELINE_FILE", out.string()}, {"MGPU_TIMELINE_TITLE", title}};
    fs::path trace_file;
    if (auto trace = args.value("--trace")) {
        trace_file = fs::absolute(*trace);
        std::error_code ignored;
        fs::remove(trace_file, ignored);
        options.environment.emplace_back("MGPU_TRACE_FILE", trace_file.string());
    }
    std::vector<std::string> argv = {program.executable.string()};
    argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
    const ExitStatus status = run_process(argv, options);
    if (status.signal != 0) std::cerr << "mgpu timeline: " << fill(tr("the program was stopped by {}."), status.describe()) << "\n";
    if (!fs::exists(out)) {
        std::cerr << "mgpu timeline: "
                  << fill(tr("no timeline was written to {}: the program ended before the tracer could save it "
                             "(see the messages above)."), out.string())
                  << "\n";
        return status.ok() ? kExitFailed : status.shell_code();
    }
    if (!trace_file.empty() && fs::exists(trace_file))
        std::cerr << "mgpu timeline: " << fill(tr("trace written to {}"), trace_file.string()) << "\n";
    std::cerr << "mgpu timeline: "
              << fill(tr("timeline written to {} (open it in a web browser; hover over a box for its details)"), out.string())
              << "\n";
    return status.shell_code();
}

int timeline(const Kit& kit, const ParsedArgs& args) {
    const auto backend = args.value("--backend").value_or("sim");
    if (backend != "sim" && backend != "cuda") throw UsageError(fill(tr("--backend is sim or cuda, not '{}'"), backend));
    const fs::path out = fs::absolute(args.value("--out").value_or("timeline.html")).lexically_normal();
    std::error_code error;
    if (!fs::is_directory(out.parent_path(), error))
        throw UsageError(fill(tr("--out {0}: the folder {1} does not exist; create it first or name a file in another folder"),
                              out.string(), out.parent_path().string()));
    if (fs::is_directory(out, error)) throw UsageError(fill(tr("--out {} is a folder; name an .html file"), out.string()));
    fs::remove(out, error);   // so that a page found afterwards is this run's
    std::string program;
    for (const auto& part : args.positionals) program += (program.empty() ? "" : " ") + part;
    if (program.empty()) throw UsageError(tr("say what to run: .cu files, a folder, or a lesson number"));
    if (backend == "cuda") return timeline_on_gpus(kit, args, out, "Timeline of " + program + " on this machine's GPUs");

    RunSetup setup;
    setup.command = "timeline";
    setup.suggest_next = false;
    setup.environment.emplace_back("MGPU_TIMELINE_FILE", out.string());
    setup.environment.emplace_back("MGPU_TIMELINE_TITLE", "Timeline of " + program);
    const RunOutcome outcome = run_program(kit, args, setup);
    if (!outcome.ran) return outcome.exit_code;
    if (!fs::exists(out)) {
        std::cerr << "mgpu timeline: "
                  << fill(tr("no timeline was written to {}: the program ended before the simulator could save it "
                             "(a crash or a call to _exit)."), out.string())
                  << "\n";
        return outcome.exit_code == 0 ? kExitFailed : outcome.exit_code;
    }
    std::cerr << "mgpu timeline: "
              << fill(tr("timeline written to {} (open it in a web browser; hover over a box for its details)"), out.string())
              << "\n";
    return outcome.exit_code;
}

}  // namespace

const Command timeline_command = {
    N_("Working on an exercise"),
    {
        .name = "timeline",
        .usage = "timeline FILE.cu...|FOLDER|LESSON [--topology NAME|FILE] [--schedule eager|lazy|shuffle:SEED] "
                 "[--backend sim|cuda] [--out FILE.html] [--trace FILE.json] [-I DIR]... [-D NAME[=VALUE]]... [-- ARGS]",
        .summary = N_("Runs a program as run does and draws what ran on each GPU as a web page."),
        .description = N_(
            "Builds and runs the program exactly as `run` does (a lesson number runs the lesson's main.cu\n"
            "with your functions, on the machine its driver shows most on), then writes one HTML page\n"
            "that any browser opens offline: a lane per stream of each GPU (named by the line that\n"
            "created it), a lane per copy engine or link, and a lane per host thread while it waits for\n"
            "the GPUs, all on one time axis in microseconds. Kernels, copies (with their direction and\n"
            "link), memsets, NCCL operations and host functions are boxes; hover over one for its name,\n"
            "start, end, bytes and link. An arrow goes from each cudaEventRecord to the\n"
            "cudaStreamWaitEvent or cudaEventSynchronize that waited for it. Boxes side by side on\n"
            "different lanes ran at the same time: that is overlap. The program's exit code is passed\n"
            "through as `run` passes it. With --backend cuda the same program is built with nvcc and\n"
            "run on this machine's GPUs instead, and the page draws what CUPTI recorded (lanes are then\n"
            "named by stream number)."),
        .options =
            {
                {"--out", "FILE.html", N_("where to write the page (default: timeline.html in this folder)")},
                {"--topology", "NAME|FILE", N_("the simulated machine: a preset (tools/mgpu topo --list) or a JSON file")},
                {"--schedule", "MODE", N_("eager (default), lazy, or shuffle:SEED to run independent streams in a "
                                       "seeded random order")},
                {"--trace", "FILE.json", N_("also write the trace in Chrome's format (ui.perfetto.dev)")},
                {"--backend", "sim|cuda", N_("sim (default): the simulator's trace; cuda: build with nvcc, run on this "
                                             "machine's GPUs and draw the CUPTI trace")},
                {"-I", "DIR", N_("search DIR for included headers; repeatable"), true},
                {"-D", "NAME[=VALUE]", N_("define a macro for every file; repeatable"), true},
                {"--keep-exit-code", "", N_("as for run: report races and leaks without failing")},
                {"--fail-on-findings", "", N_("as for run: any program fails on races and leaks")},
            },
        .max_positionals = -1,
        .takes_passthrough = true,
        .examples = "  tools/mgpu timeline 3 --out timeline.html\n"
                    "  tools/mgpu timeline 3 --topology hgx-h200-8 --schedule shuffle:7 --out shuffled.html\n"
                    "  tools/mgpu timeline samples/simple-p2p/simple_p2p.cu --topology islands-2x2\n"
                    "  tools/mgpu timeline 2 --backend cuda --out gpus.html\n",
    },
    timeline,
};

}  // namespace mgpu::cli
