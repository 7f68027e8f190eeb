// `validate`: one run that holds the kit against a real multi-GPU machine. It describes the
// machine, compares the simulator's conformance cases with the real runtime, grades every
// lesson's solution, skeleton and mutants on the GPUs, measures the peer-to-peer matrix beside
// the simulator's model, and writes it all as one markdown report.
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <mgpu/sim/machine.h>

#include "command.h"
#include "exit_codes.h"
#include "kit_config.h"
#include "lesson_files.h"
#include "lessons.h"
#include "translate.h"
#include "validate_parts.h"

#if MGPU_HAVE_CHECKER
#include "gpu_probe.h"
#endif

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kExitNoGpu = 4;

const char* kNeeds =
    N_("validate needs a machine with NVIDIA GPUs (two or more for the peer-to-peer parts), an NVIDIA driver, the CUDA "
       "Toolkit 12 or 13 (nvcc and CUPTI), and the kit configured with nvcc (meson finds nvcc and CUPTI when it "
       "configures the build). To see the whole report without a GPU: tools/mgpu validate --real-side sim --quick");

// The largest --gpus and --seed validate takes.
constexpr std::uint64_t kLargestNumber = 999999999;

// The first `count` entries of the CUDA_VISIBLE_DEVICES the user set, or 0..count-1.
std::string first_visible(int count) {
    const char* set = std::getenv("CUDA_VISIBLE_DEVICES");
    std::vector<std::string> entries;
    if (set != nullptr && *set != '\0') {
        std::string list = set;
        for (std::size_t start = 0; start <= list.size();) {
            const std::size_t end = std::min(list.find(',', start), list.size());
            entries.push_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    std::string result;
    for (int i = 0; i < count; ++i)
        result += (i == 0 ? "" : ",") + (i < static_cast<int>(entries.size()) ? entries[i] : std::to_string(i));
    return result;
}

const std::set<std::string> kParts = {"machine", "conformance", "grading", "p2p", "nccl"};

// --only PART,PART...: the parts to run (all of them without it).
std::set<std::string> chosen_parts(const std::optional<std::string>& only) {
    if (!only) return kParts;
    std::set<std::string> parts;
    std::string list = *only;
    for (char& c : list) c = c == ',' ? ';' : c;
    for (const auto& part : split_list(list)) {
        if (!kParts.count(part))
            throw UsageError(fill(tr("--only takes machine, conformance, grading, p2p and nccl, not '{}'"), part));
        parts.insert(part);
    }
    return parts;
}

// Why the GPU side cannot run the chosen parts here, or "" when it can; sets the GPU count.
Words gpu_side_problem(const ValidateRun& run, const std::set<std::string>& parts, int* gpus) {
    if (std::string(MGPU_P2P_MATRIX_CUDA).empty())
        return say(N_("the kit was configured without nvcc, so nothing was built for real GPUs"));
    // Only grading runs the lessons' checkers on the GPUs.
    if (parts.count("grading"))
        for (int lesson : lessons_in(run.kit.root / "checker" / "lessons")) {
            const auto folder = lesson_folder(run.kit.root / "checker" / "lessons", lesson);
            if (folder && !fs::exists(run.kit.build / "checker" / "lessons" / folder->filename() / "checker-build-cuda.json"))
                return say(N_("lesson {}'s checker was not built for real GPUs (meson found nvcc but not CUPTI)"), lesson);
        }
#if MGPU_HAVE_CHECKER
    const judge::GpuProbe probe = judge::probe_gpu();
    if (!probe.usable) return say(N_("no usable GPU: {}"), probe.reason);
    *gpus = probe.devices;
    return Words();
#else
    (void)gpus;
    return say(N_("the checker is not part of this build, and validate grades with it"));
#endif
}

std::string gpu_words(const ValidateRun& run) {
    const Captured names = capture({"nvidia-smi", "--query-gpu=name", "--format=csv,noheader"});
    const std::string first = names.output.substr(0, names.output.find('\n'));
    return std::to_string(run.gpus) + " x " + (names.started && !first.empty() ? first : std::string("GPU"));
}

std::string today() {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    return date;
}

bool write_report(const std::string& path, const ValidationReport& report, const std::string& summary) {
    std::ofstream file(path);
    file << report.markdown() << "\n" << summary << "\n";
    return static_cast<bool>(file);
}

int validate(const Kit& kit, const ParsedArgs& args) {
    ValidateRun run;
    run.kit = kit;
    run.work_dir = kit.build / "validate";
    run.quick = args.has("--quick");
    if (auto lessons = args.value("--lesson")) {
        std::stringstream list(*lessons);
        for (std::string number; std::getline(list, number, ',');) run.lessons.insert(lesson_argument(number));
    }
    const std::string side = args.value("--real-side").value_or("gpu");
    if (side != "gpu" && side != "sim") throw UsageError(fill(tr("--real-side is gpu or sim, not '{}'"), side));
    run.real_is_sim = side == "sim";
    if (auto topology = args.value("--topology")) {
        if (!run.real_is_sim)
            throw UsageError(tr("--topology names the machine that stands in for the GPUs: use it with --real-side sim"));
        run.real_topology = *topology;
    }
    const int wanted_gpus =
        args.value("--gpus") ? static_cast<int>(whole_number("--gpus", *args.value("--gpus"), 1, kLargestNumber)) : 0;
    run.seed = args.value("--seed") ? whole_number("--seed", *args.value("--seed"), 1, kLargestNumber)
                                    : static_cast<std::uint64_t>(std::time(nullptr) % kLargestNumber) + 1;
    const std::string out = args.value("--out").value_or("");
    const std::set<std::string> parts = chosen_parts(args.value("--only"));

    int available = 0;
    if (run.real_is_sim) {
        try {
            available = static_cast<int>(mgpu::sim::load_machine(run.real_topology).devices.size());
        } catch (const mgpu::sim::TopologyError& error) {
            throw UsageError(std::string("--topology: ") + error.what());
        }
    } else if (const Words problem = gpu_side_problem(run, parts, &available); !problem.empty()) {
        std::cerr << "mgpu validate: " << fill(tr("cannot validate here: {}."), problem.shown) << "\n" << tr(kNeeds) << "\n";
        if (!out.empty()) {
            // The file is a record: English, as every report of validate.
            ValidationReport report(false);
            report.title("mgpu validate");
            report.line("Not run: " + problem.english + ". " + kNeeds);
            write_report(out, report, "validate: NOT RUN - " + problem.english);
        }
        return kExitNoGpu;
    }
    run.gpus = wanted_gpus > 0 ? std::min(wanted_gpus, available) : available;
    if (!run.real_is_sim && run.gpus < available) ::setenv("CUDA_VISIBLE_DEVICES", first_visible(run.gpus).c_str(), 1);
    const Words machine = !run.real_is_sim ? Words(gpu_words(run))
                          : run.gpus == 1  ? say(N_("simulator {0} standing in, {1} GPU"), run.real_topology, run.gpus)
                                           : say(N_("simulator {0} standing in, {1} GPUs"), run.real_topology, run.gpus);
    run.machine_words = machine.english;   // the summary line is English in every language

    const auto start = std::chrono::steady_clock::now();
    ValidationReport report;
    report.title("mgpu validate: " + machine);
    report.line(run.quick ? say(N_("Run on {} with --quick (small copies, one mutant per criterion). Exit codes: 0 "
                                   "everything agrees and every target is met, 1 a difference or a missed target, 4 no "
                                   "GPU or the kit was built without nvcc, 2 a bad option."),
                                today())
                          : say(N_("Run on {}. Exit codes: 0 everything agrees and every target is met, 1 a difference "
                                   "or a missed target, 4 no GPU or the kit was built without nvcc, 2 a bad option."),
                                today()));
    if (parts != kParts) {
        std::string list;
        for (const auto& part : parts) list += (list.empty() ? "" : ", ") + part;
        report.line(say(N_("Only these parts were run (--only): {}."), list));
    }
    if (run.gpus == 1 && parts.count("p2p"))
        report.line(say(N_("One GPU: the peer-to-peer pairs and the solution's copy between devices need 2 or more GPUs; "
                           "they are listed as not testable here.")));
    // The judge starts each grading case in a clean environment, on the machine as it is, so
    // --gpus does not narrow the grading: only a machine with one GPU leaves its scenarios out.
    if (!run.real_is_sim && available == 1 && parts.count("grading"))
        report.line(say(N_("One GPU: the checker skips the grading scenarios with more than one device.")));
    if (parts.count("machine")) report_machine(report, run);
    if (parts.count("conformance")) compare_conformance(report, run);
    if (parts.count("grading")) grade_known_answers(report, run);
    if (parts.count("p2p")) compare_p2p_matrix(report, run);
    if (parts.count("nccl")) report_nccl(report, run);

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.section(say(N_("Summary")));
    report.line(say(N_("Took {} s."), static_cast<int>(seconds + 0.5)));
    const std::string summary = report.summary_line(run.machine_words);
    if (!out.empty()) {
        if (!write_report(out, report, summary)) throw SetupError(fill(tr("cannot write {}"), out));
        std::cout << fill(tr("wrote {}"), out) << "\n";
    }
    std::cout << summary << "\n";
    return report.exit_code();
}

}  // namespace

const Command validate_command = {
    N_("The kit itself"),
    {
        .name = "validate",
        .usage = "validate [--out FILE.md] [--quick] [--gpus N] [--seed N] [--real-side gpu|sim] [--topology NAME|FILE] "
                 "[--only PART,...]",
        .summary = N_("Holds the kit against a real multi-GPU machine in one run (needs NVIDIA GPUs)."),
        .description =
            N_("In one run: describes the machine (nvidia-smi -L, driver, CUDA version, nvidia-smi topo -m);\n"
            "compares the simulator's conformance cases with the real runtime (conformance-compare);\n"
            "grades every lesson's reference solution (full marks expected on the checks the GPUs can run),\n"
            "skeleton (near zero) and generated mutants (each must lose exactly its criterion) with\n"
            "--backend cuda; measures peer-to-peer bandwidth and latency between every pair of GPUs\n"
            "(bench/p2p) beside the simulator's prediction for as many GPUs of hgx-h200-8, with the\n"
            "ratio, and lesson 3's copy_between_devices against cudaMemcpyPeerAsync (target 0.90);\n"
            "measures NCCL all-reduce bus bandwidth (bench/nccl's nccl-perf) beside the simulator's model\n"
            "for as many GPUs. Parts a machine cannot run (too few GPUs) are listed as not testable here and\n"
            "count neither way. The last line is a summary.\n"
            "Exit codes: 0 everything agrees and every target is met, 1 a difference or a missed target,\n"
            "2 a bad option, 4 no GPU, or the kit was configured without nvcc and CUPTI."),
        .options =
            {
                {"--out", "FILE.md", N_("also write the report as markdown (for bench/results/)")},
                {"--quick", "", N_("small copies and the first mutant of each criterion: a fast run")},
                {"--gpus", "N", N_("use the first N GPUs for the machine, conformance and p2p parts (default: all); "
                                "grading uses the machine as it is")},
                {"--seed", "N", N_("the seed of the grading's random inputs (default: a new one, printed)")},
                {"--real-side", "gpu|sim", N_("gpu (the default): the GPUs here; sim: the simulator stands in for them, "
                                           "so the whole report can be produced without a GPU")},
                {"--topology", "NAME|FILE", N_("with --real-side sim: the machine that stands in for the machine, "
                                            "conformance and p2p parts (default hgx-h200-8)")},
                {"--only", "PART,...", N_("run only these parts: machine, conformance, grading, p2p, nccl")},
                {"--lesson", "N,...", N_("grade only these lessons in the grading part (default: every lesson)")},
            },
        .max_positionals = 0,
        .examples = "  tools/mgpu validate --out bench/results/hgx-h200-validation.md\n"
                    "  tools/mgpu validate --real-side sim --quick --gpus 2\n",
    },
    validate,
};

}  // namespace mgpu::cli
