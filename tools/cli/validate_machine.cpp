// Part a: which machine the figures come from, as nvidia-smi describes it (or, with
// --real-side sim, as the simulator's topology describes the machine standing in for it).
#include <mgpu/sim/machine.h>

#include "machine_table.h"
#include "validate_parts.h"

namespace mgpu::cli {

namespace {

void show_command(ValidationReport& report, const ValidateRun& run, const Words& heading,
                  const std::vector<std::string>& argv) {
    const Captured result = capture(argv);
    report.line(heading + " (`" + shell_quote(argv) + "`):");
    if (!result.started) {
        report.line(say(N_("not available: {}"), result.start_error));
        return;
    }
    // The code block holds what the command printed, so it stays as it is; so does its stand-in.
    report.preformatted(result.output.empty() ? "(no output, " + describe_end(result).english + ")" : result.output);
}

}  // namespace

void report_machine(ValidationReport& report, const ValidateRun& run) {
    report.section(say(N_("Machine")));
    report.line(say(N_("GPUs used: {}"), run.gpus));
    if (run.real_is_sim) {
        report.line(say(N_("Real side: the simulator's {0} machine narrowed to CUDA_VISIBLE_DEVICES={1} (--real-side sim: "
                           "no GPU is used, so figures agree by construction wherever the two machines are the same)."),
                        run.real_topology, run.visible_devices()));
        const auto machine = mgpu::sim::apply_visible_devices(mgpu::sim::load_machine(run.real_topology),
                                                              run.visible_devices().c_str());
        // The report keeps the simulator's own English description; the terminal shows topo's table.
        report.preformatted(Words(mgpu::sim::describe_machine(machine), machine_table(machine)));
        return;
    }
    show_command(report, run, say(N_("GPUs")), {"nvidia-smi", "-L"});
    show_command(report, run, say(N_("Driver and CUDA version")),
                 {"nvidia-smi", "--query-gpu=index,name,driver_version,memory.total", "--format=csv"});
    const Captured header = capture({"nvidia-smi"});
    const auto at = header.output.find("CUDA Version:");
    if (header.started && at != std::string::npos)
        report.line(say(N_("Driver's {}"), header.output.substr(at, header.output.find_first_of(" |\n", at + 14) - at)));
    show_command(report, run, say(N_("Topology")), {"nvidia-smi", "topo", "-m"});
    show_command(report, run, say(N_("Toolkit")), {"nvcc", "--version"});
}

}  // namespace mgpu::cli
