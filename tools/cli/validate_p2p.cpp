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

bool run_side(ValidationReport& report, const ValidateRun& run, const Words& side, const fs::path& program,
              const std::vector<std::pair<std::string, std::string>>& environment, P2pRun* result) {
    std::vector<std::string> argv = {program.string()};
    if (run.quick) argv.insert(argv.end(), {"--bytes", "16777216", "--repeats", "2", "--latency-repeats", "10"});
    std::string shown;
    for (const auto& [name, value] : environment) shown += name + "=" + value + " ";
    report.line(say(N_("Running on {0}: `{1}`"), side, shown + shell_quote(argv)));
    const Captured captured = capture(argv, environment);
    *result = parse_p2p_output(captured.output);
    if (succeeded(captured) && result->finished) return true;
    report.verdict(Verdict::Differs, say(N_("p2p matrix on {}"), side),
                   say(N_("it did not finish ({}); its last lines:"), describe_end(captured)));
    report.preformatted(last_lines(captured.output, 15));
    return false;
}

std::string cell_ratio(double ratio) { return fixed(ratio, 2) + (ratio_agrees(ratio) ? "" : " *"); }

// One table per kind of figure, and a verdict per group of pairs (same device, P2P off, P2P on).
void compare_kind(ValidationReport& report, const Sides& sides, const std::string& kind, const Words& title) {
    const std::string unit = shown_unit(kind);
    Table table{{"src -> dst", say(N_("P2P off: real {}"), unit), say(N_("model")), say(N_("ratio")),
                 say(N_("P2P on: real {}"), unit), say(N_("model")), say(N_("ratio"))},
                {}};
    struct Group {
        int compared = 0, outside = 0;
        Words worst;
    };
    Group same, off, on;
    auto add = [&](Group& group, const P2pFigure& real, const P2pFigure* model, std::vector<Words>& row) {
        row.push_back(fixed(shown_value(real), 2));
        if (model == nullptr) {
            row.insert(row.end(), {"-", "-"});
            ++group.compared;
            ++group.outside;
            group.worst = say(N_("{0}->{1} has no modelled figure"), real.src, real.dst);
            return;
        }
        const double ratio = model_ratio(real, *model);
        row.insert(row.end(), {fixed(shown_value(*model), 2), cell_ratio(ratio)});
        ++group.compared;
        if (!ratio_agrees(ratio)) {
            ++group.outside;
            if (group.worst.empty())
                group.worst = say(N_("{0}->{1} at {2}"), real.src, real.dst, fixed(ratio, 2));
        }
    };
    for (int src = 0; src < sides.gpus; ++src) {
        for (int dst = 0; dst < sides.gpus; ++dst) {
            std::vector<Words> row = {std::to_string(src) + " -> " + std::to_string(dst)};
            const P2pFigure* real_off = find_figure(sides.real, kind, src, dst, 0);
            if (real_off) add(src == dst ? same : off, *real_off, find_figure(sides.model, kind, src, dst, 0), row);
            else row.insert(row.end(), {"-", "-", "-"});
            const P2pFigure* real_on = find_figure(sides.real, kind, src, dst, 1);
            if (real_on) add(on, *real_on, find_figure(sides.model, kind, src, dst, 1), row);
            else row.insert(row.end(), {src == dst ? say(N_("(same device)")) : say(N_("(cannot peer)")), "", ""});
            table.rows.push_back(row);
        }
    }
    report.line(say(N_("{0} (real, simulator's model, ratio model / real; * outside {1}-{2}):"), title,
                    fixed(kRatioLow, 2), fixed(kRatioHigh, 2)));
    report.table(table);
    auto judge_group = [&](const Group& group, const Words& name, const Words& when_empty) {
        const Words what = say(N_("{0}, {1}"), title, name);
        if (group.compared == 0) {
            report.verdict(Verdict::NotTestable, what, when_empty);
        } else if (group.outside == 0) {
            report.verdict(Verdict::Agrees, what, say(N_("{} figures within the band"), group.compared));
        } else {
            report.verdict(Verdict::Differs, what,
                           say(N_("{0} of {1} figures outside the band (first: {2})"), group.outside, group.compared,
                               group.worst));
        }
    };
    const Words too_few = say(N_("pairs need 2 or more GPUs"));
    judge_group(same, say(N_("same device")), say(N_("no device measured")));
    judge_group(off, say(N_("peer access off")), too_few);
    judge_group(on, say(N_("peer access on")), sides.gpus < 2 ? too_few : say(N_("no pair here can peer")));
}

void compare_access(ValidationReport& report, const Sides& sides) {
    if (sides.gpus < 2) {
        report.verdict(Verdict::NotTestable, say(N_("peer access matrix")), say(N_("pairs need 2 or more GPUs")));
        return;
    }
    Words differences;
    for (const auto& [pair, can] : sides.real.access) {
        if (pair.first >= sides.gpus || pair.second >= sides.gpus) continue;
        const auto modelled = sides.model.access.find(pair);
        if (modelled == sides.model.access.end() || modelled->second != can)
            differences += (differences.empty() ? "" : ", ") +
                           (can ? say(N_("{0}->{1} can peer here"), pair.first, pair.second)
                                : say(N_("{0}->{1} cannot peer here"), pair.first, pair.second));
    }
    const Words what = say(N_("peer access matrix (cudaDeviceCanAccessPeer)"));
    if (differences.empty())
        report.verdict(Verdict::Agrees, what, say(N_("the same for every ordered pair")));
    else
        report.verdict(Verdict::Differs, what, say(N_("the model differs: {}"), differences));
}

const P2pFigure* first_of_kind(const P2pRun& run, const std::string& kind) {
    for (const auto& figure : run.figures)
        if (figure.kind == kind) return &figure;
    return nullptr;
}

void compare_solution_copy(ValidationReport& report, const Sides& sides) {
    const Words what = say(N_("lesson 3's copy_between_devices against cudaMemcpyPeerAsync, device 0 -> 1 (target {})"),
                           fixed(kSolutionCopyTarget, 2));
    const auto real = solution_copy_ratio(sides.real);
    if (!real) {
        report.verdict(Verdict::NotTestable, what, say(N_("needs 2 or more GPUs")));
        return;
    }
    const auto model = solution_copy_ratio(sides.model);
    Table table{{"", say(N_("real")), say(N_("model"))}, {}};
    for (const char* kind : {"solution-copy", "memcpy-peer-async"}) {
        const P2pFigure* r = first_of_kind(sides.real, kind);
        const P2pFigure* m = first_of_kind(sides.model, kind);
        table.rows.push_back({std::string(kind) + " ms", r ? fixed(r->ms, 4) : "-", m ? fixed(m->ms, 4) : "-"});
    }
    table.rows.push_back({say(N_("speed of the solution / cudaMemcpyPeerAsync")), fixed(*real, 3),
                          model ? fixed(*model, 3) : "-"});
    report.table(table);
    report.verdict(*real >= kSolutionCopyTarget ? Verdict::Agrees : Verdict::Differs, what,
                   model ? say(N_("measured {0}, modelled {1}"), fixed(*real, 3), fixed(*model, 3))
                         : say(N_("measured {}"), fixed(*real, 3)));
}

}  // namespace

void compare_p2p_matrix(ValidationReport& report, const ValidateRun& run) {
    report.section(say(N_("Peer-to-peer matrix: measured against the simulator's model")));
    const fs::path model_program = MGPU_P2P_MATRIX_SIM;
    const fs::path real_program = run.real_is_sim ? model_program : fs::path(MGPU_P2P_MATRIX_CUDA);
    for (const auto& program : {real_program, model_program}) {
        if (program.empty() || !fs::exists(program)) {
            report.verdict(Verdict::NotBuilt, say(N_("p2p matrix")),
                           say(N_("{0} is not built (bench/p2p; ninja -C {1} bench-and-validate builds it)"),
                               program.empty() ? say(N_("the GPU build")) : Words(program.string()), run.kit.build.string()));
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
    const bool real_ok = run_side(report, run, run.real_is_sim ? say(N_("the stand-in machine")) : say(N_("the GPUs")),
                                  real_program, real_environment, &sides.real);
    const bool model_ok = run_side(report, run, say(N_("the simulator")), model_program,
                                   {{"MGPU_TOPOLOGY", run.model_topology}, {"CUDA_VISIBLE_DEVICES", narrowed.visible_devices()}},
                                   &sides.model);
    if (!real_ok || !model_ok) return;

    // The simulator must show exactly as many GPUs as it was narrowed to, or no pair is comparable.
    const int expected = std::min(sides.real.devices, kModelGpus);
    if (sides.model.devices != expected) {
        report.verdict(Verdict::Differs, say(N_("simulator narrowed with CUDA_VISIBLE_DEVICES")),
                       say(N_("it shows {0} GPUs, not {1}"), sides.model.devices, expected));
        return;
    }
    sides.gpus = expected;
    if (sides.real.devices > kModelGpus)
        report.line(say(N_("The model has {0} GPUs; only pairs among devices 0-{1} are compared."), kModelGpus,
                        kModelGpus - 1));
    for (const auto& note : sides.real.notes) report.line(note);
    compare_access(report, sides);
    compare_kind(report, sides, "uni", say(N_("Unidirectional bandwidth")));
    compare_kind(report, sides, "bi", say(N_("Bidirectional bandwidth")));
    compare_kind(report, sides, "lat", say(N_("Latency of 4-byte copies")));
    compare_solution_copy(report, sides);
}

}  // namespace mgpu::cli
