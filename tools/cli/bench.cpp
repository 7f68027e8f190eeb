#include <filesystem>
#include <iostream>

#include "bench_grading.h"
#include "command.h"
#include "exit_codes.h"
#include "process.h"
#include "topology_choice.h"
#include "translate.h"

namespace mgpu::cli {

namespace {

struct Bench {
    const char* name;
    const char* what;
};

constexpr Bench kBenches[] = {
    {"sim", N_("the simulator's own speed and memory: kernels against plain C++, __syncthreads, resident memory")},
    {"nccl", N_("NCCL's collectives in nccl-tests' columns (size, count, type, redop, root, time, algbw, busbw, "
                "#wrong) on the simulated machine (--topology NAME; -- -e 1G -g 8 ...)")},
    {"grading", N_("grade-class on 30 generated lesson 1 submissions with --jobs 1 and --jobs 2: both times, the "
                   "speed-up (target 1.7 on two cores) and the time per submission (--students N)")},
    {"calibrate", N_("the GPU against the simulator's h200 model, and lesson 3's solution against the GPU's ceilings "
                     "(needs a GPU; --out FILE.md)")},
    {"host-costs", N_("the GPU against the simulator's h200 model for host-side costs: small copies, memsets, launches, "
                      "pageable against pinned copy calls, page-locking (needs a GPU; --out FILE.md)")},
};

int bench(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty()) {
        std::cout << tr("Benches (run one with tools/mgpu bench NAME):") << "\n";
        for (const auto& entry : kBenches) std::cout << "  " << entry.name << "  " << tr(entry.what) << "\n";
        return kExitOk;
    }
    const std::string& name = args.positionals.front();
    if (name == "calibrate" || name == "host-costs") {
        const std::filesystem::path program = kit.build / "bench" / "bench-calibrate";
        if (!std::filesystem::exists(program))
            throw SetupError(fill(tr("the calibration bench (bench-calibrate) is not built in {}"), kit.build.string()));
        std::vector<std::string> argv = {program.string()};
        if (name == "host-costs") argv.push_back("--host-costs");
        argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
        return run_process(argv).shell_code();
    }
    if (name == "grading") return run_grading_bench(kit, args);
    if (args.has("--students")) throw UsageError(tr("--students applies to bench grading only"));
    if (name == "nccl") {
        const std::filesystem::path program = kit.build / "bench" / "nccl" / "nccl-perf";
        if (!std::filesystem::exists(program))
            throw SetupError(fill(tr("the NCCL bench (nccl-perf) is not built in {}"), kit.build.string()));
        SpawnOptions options;
        options.environment.emplace_back("MGPU_TOPOLOGY", checked_topology(args.value("--topology").value_or("hgx-h200-8")));
        std::vector<std::string> argv = {program.string()};
        argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
        return run_process(argv, options).shell_code();
    }
    if (args.has("--topology")) throw UsageError(tr("--topology applies to bench nccl only"));
    if (name != "sim") throw UsageError(fill(tr("there is no bench '{}'; run 'tools/mgpu bench' for the list"), name));
    const std::filesystem::path program = kit.bench_sim();
    if (program.empty() || !std::filesystem::exists(program))
        throw SetupError(fill(tr("the simulator bench (bench-sim) is not built in {}"), kit.build.string()));
    std::vector<std::string> argv = {program.string()};
    argv.insert(argv.end(), args.passthrough.begin(), args.passthrough.end());
    return run_process(argv).shell_code();
}

}  // namespace

const Command bench_command = {
    N_("The kit itself"),
    {
        .name = "bench",
        .usage = "bench [sim|nccl|grading|calibrate|host-costs] [--topology NAME|FILE] [--students N] [-- ARGS]",
        .summary = N_("Lists the benches, or runs one and shows what it measured."),
        .description = N_("Each figure is printed with its target and PASS or MISS; the exit code is the bench's\n"
                       "own (1 when a figure misses its target)."),
        .options = {{"--topology", "NAME|FILE", N_("bench nccl: the simulated machine (default hgx-h200-8)")},
                    {"--students", "N", N_("bench grading: the size of the generated class (default 30)")}},
        .max_positionals = 1,
        .takes_passthrough = true,
    },
    bench,
};

}  // namespace mgpu::cli
