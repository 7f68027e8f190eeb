// Part e: NCCL all-reduce bandwidth. bench/nccl's nccl-perf runs on the GPUs (built with nvcc
// against the CUDA Toolkit's NCCL) and on the simulator's model narrowed to as many GPUs, and the
// bus bandwidth of each size is held against the model, as nccl-tests reports it. An all-reduce
// needs two GPUs at least: on one, NCCL moves nothing between GPUs and busbw is 0 by definition.
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "kit_config.h"
#include "validate_p2p_figures.h"
#include "validate_parts.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kNcclModelGpus = 8;   // the model's largest machine, hgx-h200-8
// Sizes below this are latency-bound; the bandwidth comparison starts here.
constexpr double kSmallestComparedBytes = 1 << 20;

std::string bus_fixed(double value, int digits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

// Out-of-place figures per size in bytes, from nccl-perf's (nccl-tests') table.
struct BusRow {
    double us = 0, algbw = 0, busbw = 0;
};

std::map<double, BusRow> parse_nccl_rows(const std::string& output) {
    std::map<double, BusRow> rows;
    std::istringstream lines(output);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        double size = 0, count = 0;
        std::string type, redop, root;
        BusRow row;
        if (fields >> size >> count >> type >> redop >> root >> row.us >> row.algbw >> row.busbw) rows[size] = row;
    }
    return rows;
}

std::vector<std::string> perf_arguments(const ValidateRun& run, int gpus) {
    std::vector<std::string> argv = {"--op", "all_reduce", "-g", std::to_string(gpus), "-b", "1M",
                                     "-e", run.quick ? "16M" : "1G", "-f", "4", "-n", run.quick ? "2" : "5"};
    // The stand-in and the model take modelled times: moving the data adds nothing but wall time.
    argv.insert(argv.end(), {"--check-up-to", run.quick ? "0" : "64M"});
    return argv;
}

bool run_nccl_side(ValidationReport& report, const Words& side, const fs::path& program,
              const std::vector<std::string>& arguments,
              const std::vector<std::pair<std::string, std::string>>& environment, std::map<double, BusRow>* rows) {
    std::vector<std::string> argv = {program.string()};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::string shown;
    for (const auto& [name, value] : environment) shown += name + "=" + value + " ";
    report.line(say(N_("Running on {0}: `{1}`"), side, shown + shell_quote(argv)));
    const Captured captured = capture(argv, environment);
    *rows = parse_nccl_rows(captured.output);
    if (succeeded(captured) && !rows->empty()) return true;
    report.verdict(Verdict::Differs, say(N_("nccl-perf on {}"), side),
                   say(N_("it did not finish with a table ({}); its last lines:"), describe_end(captured)));
    report.preformatted(last_lines(captured.output, 15));
    return false;
}

}  // namespace

void report_nccl(ValidationReport& report, const ValidateRun& run) {
    report.section(say(N_("NCCL all-reduce (algbw, busbw)")));
    const int gpus = std::min(run.gpus, kNcclModelGpus);
    const Words busbw = say(N_("NCCL all-reduce busbw"));
    if (gpus < 2) {
        report.verdict(Verdict::NotTestable, busbw,
                       say(N_("needs 2 GPUs or more (this run has {0}; with one, an all-reduce moves nothing between GPUs "
                              "and busbw is 0). With N GPUs it runs bench/nccl's nccl-perf --op all_reduce -g N from "
                              "1 MiB to 1 GiB on the GPUs and on the simulator's {1} narrowed to N GPUs, and holds each "
                              "size's bus bandwidth to the model (agreement {2} to {3})"),
                           run.gpus, run.model_topology, bus_fixed(kRatioLow, 2), bus_fixed(kRatioHigh, 2)));
        return;
    }
    const fs::path model_program = MGPU_NCCL_PERF_SIM;
    const fs::path real_program = run.real_is_sim ? model_program : fs::path(MGPU_NCCL_PERF_CUDA);
    for (const auto& program : {real_program, model_program}) {
        if (program.empty() || !fs::exists(program)) {
            report.verdict(Verdict::NotBuilt, busbw,
                           say(N_("{0} is not built (bench/nccl; ninja -C {1} builds it)"),
                               program.empty() ? say(N_("the GPU build of nccl-perf (needs NCCL beside nvcc)"))
                                               : Words(program.string()),
                               run.kit.build.string()));
            return;
        }
    }
    ValidateRun narrowed = run;
    narrowed.gpus = gpus;
    std::vector<std::pair<std::string, std::string>> real_environment;
    if (run.real_is_sim)
        real_environment = {{"MGPU_TOPOLOGY", run.real_topology}, {"CUDA_VISIBLE_DEVICES", narrowed.visible_devices()}};
    std::map<double, BusRow> real, model;
    const bool real_ok = run_nccl_side(report, run.real_is_sim ? say(N_("the stand-in machine")) : say(N_("the GPUs")),
                                       real_program, perf_arguments(run, gpus), real_environment, &real);
    const bool model_ok = run_nccl_side(report, say(N_("the simulator")), model_program, perf_arguments(run, gpus),
                                   {{"MGPU_TOPOLOGY", run.model_topology},
                                    {"CUDA_VISIBLE_DEVICES", narrowed.visible_devices()}},
                                   &model);
    if (!real_ok || !model_ok) return;

    Table table{{say(N_("size (B)")), say(N_("real us")), say(N_("real busbw GB/s")), say(N_("model us")),
                 say(N_("model busbw GB/s")), say(N_("ratio"))},
                {}};
    int compared = 0, outside = 0;
    Words worst;
    for (const auto& [size, measured] : real) {
        auto modelled = model.find(size);
        if (modelled == model.end() || size < kSmallestComparedBytes) continue;
        const double ratio = modelled->second.busbw > 0 ? measured.busbw / modelled->second.busbw : 0;
        ++compared;
        if (!ratio_agrees(ratio)) {
            ++outside;
            if (worst.empty()) worst = say(N_("{0} B at {1}"), bus_fixed(size, 0), bus_fixed(ratio, 2));
        }
        table.rows.push_back({bus_fixed(size, 0), bus_fixed(measured.us, 2), bus_fixed(measured.busbw, 2),
                              bus_fixed(modelled->second.us, 2), bus_fixed(modelled->second.busbw, 2),
                              bus_fixed(ratio, 2) + (ratio_agrees(ratio) ? "" : " *")});
    }
    report.table(table);
    const Words what = say(N_("NCCL all-reduce busbw on {} GPUs"), gpus);
    if (compared == 0) {
        report.verdict(Verdict::Differs, what, say(N_("no size from 1 MiB up appears in both tables")));
        return;
    }
    const Words within = say(N_("{0} of {1} sizes within the agreement range"), compared - outside, compared);
    report.verdict(outside == 0 ? Verdict::Agrees : Verdict::Differs, what,
                   worst.empty() ? within : within + say(N_("; first outside: {}"), worst));
}

}  // namespace mgpu::cli
