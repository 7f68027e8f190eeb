// conformance-compare: runs every conformance program on the simulator and its twin built against
// the real CUDA runtime, and shows each test case whose result differs, the cases the real
// machine could not host, and one summary line. The exit status is documented in kHelp.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "conformance_diff.h"
#include "conformance_programs.h"
#include "conformance_report.h"
#include "doctest_results.h"
#include "gpu_probe.h"
#include "program_run.h"

namespace fs = std::filesystem;
using namespace mgpu::validate;

namespace {

constexpr int kNoDifference = 0;
constexpr int kSomeDiffer = 1;
constexpr int kUsage = 2;
constexpr int kSimulatorSideCannotRun = 3;
constexpr int kComparisonNotMade = 3;   // shares its status with the simulator side: see kHelp
constexpr int kRealSideCannotRun = 4;

constexpr const char* kHelp = R"(Usage: conformance-compare [options]

Runs each conformance program of the kit (tests/conformance) twice: on the simulator, and built
against the real CUDA runtime on this machine's GPUs. Prints every test case whose result differs
(with the failing assertion), then the cases the real machine could not host and why, then:

  conformance: N cases compared, D differ, S skipped on the real machine

Options:
  --real-side real|sim      what runs opposite the simulator (default: real). "sim" runs the
                            simulator's programs in place of the real ones, which exercises the
                            whole comparison on a machine without a GPU (it must find 0 differences)
  --markdown FILE           also write the comparison to FILE as a markdown section
  --program NAME            compare this program only; may be given more than once (see --list)
  --list                    list the programs with the paths of both builds, and exit
  --real-visible-devices L  run the real side once more with CUDA_VISIBLE_DEVICES=L; may be given
                            more than once. Without it: once with the GPUs as they are and, where
                            there are several, once more with CUDA_VISIBLE_DEVICES=0 so that the
                            one-GPU presets find a machine of their size
  --sim-dir DIR             take the simulator's programs from DIR (conformance-NAME)
  --real-dir DIR            take the real-runtime programs from DIR (conformance-real-NAME)
  --timeout SECONDS         time limit of each program run (default: 600)
  --keep DIR                keep every run's XML report and output in DIR
  -h, --help                show this text

A case is skipped on the real machine when its scenario cannot exist there: too few or too many
GPUs for its preset, other peer pairs, a schedule or an injected fault of the simulator, a machine
without a driver. Skipped cases are listed with their reason and never count as differences.

Exit status:
  0  no test case differs
  1  some test case differs (or ran on one side only)
  2  the command line is wrong
  3  the simulator side could not run (its programs are missing or do not start), or the
     comparison itself could not be made
  4  the real side could not run: this build has no real-runtime programs (nvcc or CUPTI were
     missing when it was configured), or this machine has no usable NVIDIA GPU or driver
)";

struct Settings {
    bool real_side_is_simulator = false;
    std::optional<std::string> markdown_file;
    std::vector<std::string> programs;
    bool list = false;
    std::vector<std::string> visible_device_lists;
    std::optional<std::string> simulator_dir;
    std::optional<std::string> real_dir;
    double timeout_seconds = 600;
    std::optional<std::string> keep_dir;
};

struct UsageError {
    std::string message;
};

Settings parse_arguments(int argc, char** argv, bool& help) {
    Settings settings;
    help = false;
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        auto value = [&]() -> std::string {
            const auto equals = argument.find('=');
            if (argument.rfind("--", 0) == 0 && equals != std::string::npos) return argument.substr(equals + 1);
            if (i + 1 >= argc) throw UsageError{argument + " needs a value"};
            return argv[++i];
        };
        const std::string option = argument.substr(0, argument.find('='));
        if (option == "-h" || option == "--help") {
            help = true;
        } else if (option == "--real-side") {
            const std::string side = value();
            if (side != "real" && side != "sim") throw UsageError{"--real-side takes real or sim, not \"" + side + "\""};
            settings.real_side_is_simulator = side == "sim";
        } else if (option == "--markdown") {
            settings.markdown_file = value();
        } else if (option == "--program") {
            settings.programs.push_back(value());
        } else if (option == "--list") {
            settings.list = true;
        } else if (option == "--real-visible-devices") {
            settings.visible_device_lists.push_back(value());
        } else if (option == "--sim-dir") {
            settings.simulator_dir = value();
        } else if (option == "--real-dir") {
            settings.real_dir = value();
        } else if (option == "--timeout") {
            const std::string text = value();
            char* end = nullptr;
            settings.timeout_seconds = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || settings.timeout_seconds <= 0)
                throw UsageError{"--timeout takes a number of seconds above 0, not \"" + text + "\""};
        } else if (option == "--keep") {
            settings.keep_dir = value();
        } else {
            throw UsageError{"unknown option " + argument};
        }
    }
    return settings;
}

struct Program {
    std::string name;
    std::string simulator_path;
    std::string real_path;   // "" when this build has none
};

std::vector<Program> select_programs(const Settings& settings) {
    std::vector<Program> all;
    for (const auto& built : kBuiltConformancePrograms) {
        Program program{built.name, built.simulator_path, built.real_path};
        if (settings.simulator_dir) program.simulator_path = (fs::path(*settings.simulator_dir) / ("conformance-" + program.name)).string();
        if (settings.real_dir) program.real_path = (fs::path(*settings.real_dir) / ("conformance-real-" + program.name)).string();
        all.push_back(program);
    }
    if (settings.programs.empty()) return all;
    std::vector<Program> chosen;
    std::set<std::string> seen;
    for (const auto& wanted : settings.programs) {
        bool found = false;
        for (const auto& program : all)
            if (program.name == wanted || "conformance-" + program.name == wanted) {
                if (seen.insert(program.name).second) chosen.push_back(program);
                found = true;
            }
        if (!found) {
            std::string names;
            for (const auto& program : all) names += " " + program.name;
            throw UsageError{"there is no conformance program \"" + wanted + "\"; the programs are:" + names};
        }
    }
    return chosen;
}

// One run of the real side: the environment it runs in.
struct RealRunPlan {
    std::string label;
    std::optional<std::string> visible_devices;   // CUDA_VISIBLE_DEVICES for it; none = as inherited
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The XML report goes to a file in `work_dir` (doctest writes it there); the output is kept there
// too only when `keep_output`: messages take its tail from memory.
SideRun run_side(const std::string& program, const std::string& file_stem, const std::string& label,
                 const std::optional<std::string>& visible_devices, const fs::path& work_dir, double timeout,
                 bool keep_output) {
    const fs::path report = work_dir / (file_stem + ".xml");
    ProgramRun run;
    run.program = program;
    run.arguments = {"--reporters=xml", "--out=" + report.string(), "--no-colors=true"};
    if (visible_devices) run.environment_changes.push_back({"CUDA_VISIBLE_DEVICES", *visible_devices});
    // CUDA 12 and 13 load a kernel's module at its first launch, which may synchronise the context
    // (CUDA Programming Guide, "Lazy Loading"). The cases time first launches and look for
    // concurrency, as the simulator models it; loading every module when the program starts is the
    // behaviour they describe. A value set by the caller is kept.
    if (std::getenv("CUDA_MODULE_LOADING") == nullptr)
        run.environment_changes.push_back({"CUDA_MODULE_LOADING", "EAGER"});
    run.timeout_seconds = timeout;
    std::error_code ignored;
    fs::remove(report, ignored);

    SideRun side;
    side.label = label;
    const mgpu::judge::ProcessOutcome outcome = run_program(run);
    side.results = read_doctest_report(read_file(report));
    std::string problem = describe_abnormal_end(outcome);
    if (problem.empty() && !side.results.complete) problem = side.results.problem;
    if (!problem.empty() && outcome.started) {
        const std::string tail = output_tail_in_one_line(outcome.output, 3);
        if (!tail.empty()) problem += "; its last output: " + tail;
    }
    if (keep_output) {
        const fs::path output = work_dir / (file_stem + ".log");
        std::ofstream(output, std::ios::binary | std::ios::trunc) << outcome.output;
    }
    side.problem = problem;
    return side;
}

int list_programs(const std::vector<Program>& programs) {
    for (const auto& program : programs)
        std::cout << program.name << "\n  simulator: " << program.simulator_path
                  << "\n  real:      " << (program.real_path.empty() ? "(not built: no nvcc or CUPTI)" : program.real_path) << "\n";
    return kNoDifference;
}

int real_side_cannot_run(const std::string& why) {
    std::cerr << "conformance-compare: the real side cannot run: " << why << "\n"
              << "Nothing was compared. On a machine without a GPU, --real-side sim exercises the comparison "
                 "with the simulator on both sides.\n";
    return kRealSideCannotRun;
}

int compare(const Settings& settings) {
    const std::vector<Program> programs = select_programs(settings);
    if (settings.list) return list_programs(programs);

    for (const auto& program : programs)
        if (!fs::exists(program.simulator_path)) {
            std::cerr << "conformance-compare: the simulator's program " << program.simulator_path
                      << " does not exist; build the kit first (ninja in the build folder).\n";
            return kSimulatorSideCannotRun;
        }

    std::vector<RealRunPlan> real_runs;
    std::string real_side_name = "real GPU";
    if (settings.real_side_is_simulator) {
        real_side_name = "simulator (standing in for the real GPU)";
        real_runs.push_back({"", std::nullopt});
    } else {
        for (const auto& program : programs) {
            if (program.real_path.empty())
                return real_side_cannot_run(
                    "this build has no conformance programs for the real CUDA runtime (they are built only where nvcc "
                    "and CUPTI were found when the build folder was configured).");
            if (!fs::exists(program.real_path))
                return real_side_cannot_run("the real-runtime program " + program.real_path +
                                            " does not exist; build it first (ninja in the build folder).");
        }
        const mgpu::judge::GpuProbe gpu = mgpu::judge::probe_gpu();
        if (!gpu.usable) return real_side_cannot_run(gpu.reason + ".");
        real_runs.push_back({"GPUs as they are", std::nullopt});
        if (settings.visible_device_lists.empty() && gpu.devices > 1)
            real_runs.push_back({"CUDA_VISIBLE_DEVICES=0", std::string("0")});
        for (const auto& list : settings.visible_device_lists)
            real_runs.push_back({"CUDA_VISIBLE_DEVICES=" + list, list});
    }

    fs::path work_dir;
    std::error_code error;
    if (settings.keep_dir) {
        work_dir = *settings.keep_dir;
        fs::create_directories(work_dir, error);
        if (error) {
            std::cerr << "conformance-compare: cannot make " << work_dir.string() << ": " << error.message() << "\n";
            return kComparisonNotMade;
        }
    } else {
        std::string pattern = (fs::temp_directory_path() / "conformance-compare-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            std::cerr << "conformance-compare: cannot make a folder for the reports under "
                      << fs::temp_directory_path().string() << "\n";
            return kComparisonNotMade;
        }
        work_dir = pattern;
    }

    const bool keep = settings.keep_dir.has_value();
    Comparison comparison;
    bool simulator_did_not_start = false;
    std::string real_side_problem;   // the first real run that ended without reaching any case
    for (const auto& program : programs) {
        std::cerr << "conformance-compare: " << program.name << " ..." << std::flush;
        std::vector<SideRun> simulator_side = {
            run_side(program.simulator_path, program.name + ".simulator", "", std::nullopt, work_dir, settings.timeout_seconds,
                     keep)};
        if (!simulator_side.front().problem.empty() && simulator_side.front().results.cases.empty())
            simulator_did_not_start = true;
        std::vector<SideRun> real_side;
        const std::string real_path = settings.real_side_is_simulator ? program.simulator_path : program.real_path;
        for (std::size_t i = 0; i < real_runs.size(); ++i) {
            real_side.push_back(run_side(real_path, program.name + ".real-" + std::to_string(i), real_runs[i].label,
                                         real_runs[i].visible_devices, work_dir, settings.timeout_seconds, keep));
            const SideRun& run = real_side.back();
            if (real_side_problem.empty() && !run.problem.empty() && run.results.cases.empty())
                real_side_problem = program.name + ": " + run.problem;
        }
        compare_program(program.name, simulator_side, real_side, comparison);
        std::cerr << " done\n";
    }
    if (!settings.keep_dir) fs::remove_all(work_dir, error);

    std::cout << format_text(comparison, real_side_name) << std::flush;
    if (settings.markdown_file) {
        std::ofstream markdown(*settings.markdown_file);
        markdown << format_markdown(comparison, real_side_name);
        if (!markdown) {
            std::cerr << "conformance-compare: cannot write " << *settings.markdown_file << "\n";
            return kComparisonNotMade;
        }
    }
    if (comparison.real_cases_run == 0 && !real_side_problem.empty()) {
        std::cerr << "conformance-compare: the real side could not run: no test case ran to its end there ("
                  << real_side_problem << ").\n";
        return kRealSideCannotRun;
    }
    if (simulator_did_not_start) return kSimulatorSideCannotRun;
    return comparison.differing.empty() ? kNoDifference : kSomeDiffer;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        bool help = false;
        const Settings settings = parse_arguments(argc, argv, help);
        if (help) {
            std::cout << kHelp;
            return kNoDifference;
        }
        return compare(settings);
    } catch (const UsageError& usage) {
        std::cerr << "conformance-compare: " << usage.message << "\nRun conformance-compare --help for the options.\n";
        return kUsage;
    } catch (const std::exception& unexpected) {
        std::cerr << "conformance-compare: " << unexpected.what() << "\n";
        return kComparisonNotMade;
    }
}
