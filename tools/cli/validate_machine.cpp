// Part a: which machine the figures come from, as nvidia-smi describes it (or, with
// --real-side sim, as the simulator's topology describes the machine standing in for it).
#include <mgpu/sim/machine.h>

#include "validate_parts.h"

namespace mgpu::cli {

namespace {

void show_command(ValidationReport& report, const ValidateRun& run, const std::string& heading,
                  const std::vector<std::string>& argv) {
    const Captured result = capture(argv);
    report.line(heading + " (`" + shell_quote(argv) + "`):");
    if (!result.started) {
        report.line("not available: " + result.start_error);
        return;
    }
    report.preformatted(result.output.empty() ? "(no output, " + describe_end(result) + ")" : result.output);
}

}  // namespace

void report_machine(ValidationReport& report, const ValidateRun& run) {
    report.section("Machine");
    report.line("GPUs used: " + std::to_string(run.gpus));
    if (run.real_is_sim) {
        report.line("Real side: the simulator's " + run.real_topology + " machine narrowed to CUDA_VISIBLE_DEVICES=" +
                    run.visible_devices() + " (--real-side sim: no GPU is used, so figures agree by construction "
                    "wherever the two machines are the same).");
        const auto machine = mgpu::sim::apply_visible_devices(mgpu::sim::load_machine(run.real_topology),
                                                              run.visible_devices().c_str());
        report.preformatted(mgpu::sim::describe_machine(machine));
        return;
    }
    show_command(report, run, "GPUs", {"nvidia-smi", "-L"});
    show_command(report, run, "Driver and CUDA version",
                 {"nvidia-smi", "--query-gpu=index,name,driver_version,memory.total", "--format=csv"});
    const Captured header = capture({"nvidia-smi"});
    const auto at = header.output.find("CUDA Version:");
    if (header.started && at != std::string::npos)
        report.line("Driver's " + header.output.substr(at, header.output.find_first_of(" |\n", at + 14) - at));
    show_command(report, run, "Topology", {"nvidia-smi", "topo", "-m"});
    show_command(report, run, "Toolkit", {"nvcc", "--version"});
}

}  // namespace mgpu::cli
