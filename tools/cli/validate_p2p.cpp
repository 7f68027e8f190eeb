// Part d: bench/p2p's matrix measured on the GPUs and modelled by the simulator (the
// hgx-h200-8 preset narrowed to as many GPUs with CUDA_VISIBLE_DEVICES), figure by figure with
// the ratio, and lesson 3's copy_between_devices against cudaMemcpyPeerAsync.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "kit_config.h"
#include "validate_p2p_figures.h"
#include "validate_parts.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// The model has at most the eight GPUs of an HGX board.
constexpr int kModelGpus = 8;

std::string fixed(double value, int digits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

struct Sides {
    P2pRun real, model;
    int gpus = 0;   // pairs compared: both runs have these devices
};

bool run_side(ValidationReport& report, const ValidateRun& run, const std::string& side, const fs::path& program,
              const std::vector<std::pair<std::string, std::string>>& environment, P2pRun* result) {
    std::vector<std::string> argv = {program.string()};
    if (run.quick) argv.insert(argv.end(), {"--bytes", "16777216", "--repeats", "2", "--latency-repeats", "10"});
    std::string shown;
    for (const auto& [name, value] : environment) shown += name + "=" + value + " ";
    report.line("Running on " + side + ": `" + shown + shell_quote(argv) + "`");
    const Captured captured = capture(argv, environment);
    *result = parse_p2p_output(captured.output);
    if (succeeded(captured) && result->finished) return true;
    report.verdict(Verdict::Differs, "p2p matrix on " + side, "it did not finish (" + describe_end(captured) + "); its last lines:");
    report.preformatted(last_lines(captured.output, 15));
    return false;
}

std::string cell_ratio(double ratio) { return fixed(ratio, 2) + (ratio_agrees(ratio) ? "" : " *"); }

// One table per kind of figure, and a verdict per group of pairs (same device, P2P off, P2P on).
void compare_kind(ValidationReport& report, const Sides& sides, const std::string& kind, const std::string& title) {
    const std::string unit = shown_unit(kind);
    Table table{{"src -> dst", "P2P off: real " + unit, "model", "ratio", "P2P on: real " + unit, "model", "ratio"}, {}};
    struct Group {
        int compared = 0, outside = 0;
        std::string worst;
    };
    Group same, off, on;
    auto add = [&](Group& group, const P2pFigure& real, const P2pFigure* model, std::vector<std::string>& row) {
        row.push_back(fixed(shown_value(real), 2));
        if (model == nullptr) {
            row.insert(row.end(), {"-", "-"});
            ++group.compared;
            ++group.outside;
            group.worst = std::to_string(real.src) + "->" + std::to_string(real.dst) + " has no modelled figure";
            return;
        }
        const double ratio = model_ratio(real, *model);
        row.insert(row.end(), {fixed(shown_value(*model), 2), cell_ratio(ratio)});
        ++group.compared;
        if (!ratio_agrees(ratio)) {
            ++group.outside;
            if (group.worst.empty())
                group.worst = std::to_string(real.src) + "->" + std::to_string(real.dst) + " at " + fixed(ratio, 2);
        }
    };
    for (int src = 0; src < sides.gpus; ++src) {
        for (int dst = 0; dst < sides.gpus; ++dst) {
            std::vector<std::string> row = {std::to_string(src) + " -> " + std::to_string(dst)};
            const P2pFigure* real_off = find_figure(sides.real, kind, src, dst, 0);
            if (real_off) add(src == dst ? same : off, *real_off, find_figure(sides.model, kind, src, dst, 0), row);
            else row.insert(row.end(), {"-", "-", "-"});
            const P2pFigure* real_on = find_figure(sides.real, kind, src, dst, 1);
            if (real_on) add(on, *real_on, find_figure(sides.model, kind, src, dst, 1), row);
            else row.insert(row.end(), {src == dst ? "(same device)" : "(cannot peer)", "", ""});
            table.rows.push_back(row);
        }
    }
    report.line(title + " (real, simulator's model, ratio model / real; * outside " + fixed(kRatioLow, 2) + "-" +
                fixed(kRatioHigh, 2) + "):");
    report.table(table);
    auto judge_group = [&](const Group& group, const std::string& name, const std::string& when_empty) {
        const std::string what = title + ", " + name;
        if (group.compared == 0) {
            report.verdict(Verdict::NotTestable, what, when_empty);
        } else if (group.outside == 0) {
            report.verdict(Verdict::Agrees, what, std::to_string(group.compared) + " figures within the band");
        } else {
            report.verdict(Verdict::Differs, what,
                           std::to_string(group.outside) + " of " + std::to_string(group.compared) +
                               " figures outside the band (first: " + group.worst + ")");
        }
    };
    judge_group(same, "same device", "no device measured");
    judge_group(off, "peer access off", "pairs need 2 or more GPUs");
    judge_group(on, "peer access on", sides.gpus < 2 ? "pairs need 2 or more GPUs" : "no pair here can peer");
}

void compare_access(ValidationReport& report, const Sides& sides) {
    if (sides.gpus < 2) {
        report.verdict(Verdict::NotTestable, "peer access matrix", "pairs need 2 or more GPUs");
        return;
    }
    std::string differences;
    for (const auto& [pair, can] : sides.real.access) {
        if (pair.first >= sides.gpus || pair.second >= sides.gpus) continue;
        const auto modelled = sides.model.access.find(pair);
        if (modelled == sides.model.access.end() || modelled->second != can)
            differences += (differences.empty() ? "" : ", ") + std::to_string(pair.first) + "->" +
                           std::to_string(pair.second) + (can ? " can peer here" : " cannot peer here");
    }
    if (differences.empty())
        report.verdict(Verdict::Agrees, "peer access matrix (cudaDeviceCanAccessPeer)", "the same for every ordered pair");
    else
        report.verdict(Verdict::Differs, "peer access matrix (cudaDeviceCanAccessPeer)", "the model differs: " + differences);
}

const P2pFigure* first_of_kind(const P2pRun& run, const std::string& kind) {
    for (const auto& figure : run.figures)
        if (figure.kind == kind) return &figure;
    return nullptr;
}

void compare_solution_copy(ValidationReport& report, const Sides& sides) {
    const std::string what = "lesson 3's copy_between_devices against cudaMemcpyPeerAsync, device 0 -> 1 (target " +
                             fixed(kSolutionCopyTarget, 2) + ")";
    const auto real = solution_copy_ratio(sides.real);
    if (!real) {
        report.verdict(Verdict::NotTestable, what, "needs 2 or more GPUs");
        return;
    }
    const auto model = solution_copy_ratio(sides.model);
    Table table{{"", "real", "model"}, {}};
    for (const char* kind : {"solution-copy", "memcpy-peer-async"}) {
        const P2pFigure* r = first_of_kind(sides.real, kind);
        const P2pFigure* m = first_of_kind(sides.model, kind);
        table.rows.push_back({std::string(kind) + " ms", r ? fixed(r->ms, 4) : "-", m ? fixed(m->ms, 4) : "-"});
    }
    table.rows.push_back({"speed of the solution / cudaMemcpyPeerAsync", fixed(*real, 3), model ? fixed(*model, 3) : "-"});
    report.table(table);
    report.verdict(*real >= kSolutionCopyTarget ? Verdict::Agrees : Verdict::Differs, what,
                   "measured " + fixed(*real, 3) + (model ? ", modelled " + fixed(*model, 3) : std::string()));
}

}  // namespace

void compare_p2p_matrix(ValidationReport& report, const ValidateRun& run) {
    report.section("Peer-to-peer matrix: measured against the simulator's model");
    const fs::path model_program = MGPU_P2P_MATRIX_SIM;
    const fs::path real_program = run.real_is_sim ? model_program : fs::path(MGPU_P2P_MATRIX_CUDA);
    for (const auto& program : {real_program, model_program}) {
        if (program.empty() || !fs::exists(program)) {
            report.verdict(Verdict::NotBuilt, "p2p matrix",
                           (program.empty() ? std::string("the GPU build") : program.string()) +
                               " is not built (bench/p2p; ninja -C " + run.kit.build.string() + " bench-and-validate builds it)");
            return;
        }
    }
    Sides sides;
    const int model_gpus = std::min(run.gpus, kModelGpus);
    ValidateRun narrowed = run;
    narrowed.gpus = model_gpus;
    std::vector<std::pair<std::string, std::string>> real_environment;
    if (run.real_is_sim)
        real_environment = {{"MGPU_TOPOLOGY", run.real_topology}, {"CUDA_VISIBLE_DEVICES", run.visible_devices()}};
    const bool real_ok = run_side(report, run, run.real_is_sim ? "the stand-in machine" : "the GPUs", real_program,
                                  real_environment, &sides.real);
    const bool model_ok = run_side(report, run, "the simulator", model_program,
                                   {{"MGPU_TOPOLOGY", run.model_topology}, {"CUDA_VISIBLE_DEVICES", narrowed.visible_devices()}},
                                   &sides.model);
    if (!real_ok || !model_ok) return;

    // The simulator must show exactly as many GPUs as it was narrowed to, or no pair is comparable.
    const int expected = std::min(sides.real.devices, kModelGpus);
    if (sides.model.devices != expected) {
        report.verdict(Verdict::Differs, "simulator narrowed with CUDA_VISIBLE_DEVICES",
                       "it shows " + std::to_string(sides.model.devices) + " GPUs, not " + std::to_string(expected));
        return;
    }
    sides.gpus = expected;
    if (sides.real.devices > kModelGpus)
        report.line("The model has " + std::to_string(kModelGpus) + " GPUs; only pairs among devices 0-" +
                    std::to_string(kModelGpus - 1) + " are compared.");
    for (const auto& note : sides.real.notes) report.line(note);
    compare_access(report, sides);
    compare_kind(report, sides, "uni", "Unidirectional bandwidth");
    compare_kind(report, sides, "bi", "Bidirectional bandwidth");
    compare_kind(report, sides, "lat", "Latency of 4-byte copies");
    compare_solution_copy(report, sides);
}

}  // namespace mgpu::cli
