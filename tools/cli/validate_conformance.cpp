// Part b: the simulator's conformance cases run on the real GPUs and on the simulator, compared
// by tools/validate's conformance-compare (exit 0 no differences, 1 some differ, 2 usage, 3 the
// simulator side could not run or the comparison could not be made, 4 the real side could not
// run; its last line counts the cases).
// With --real-side sim it runs the simulator's programs on both sides, as validate does.
#include <filesystem>
#include <fstream>

#include "kit_config.h"
#include "validate_parts.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

void compare_conformance(ValidationReport& report, const ValidateRun& run) {
    report.section(say(N_("Conformance: the simulator against the real runtime")));
    const fs::path program = MGPU_CONFORMANCE_COMPARE;
    const Words what = say(N_("conformance cases"));
    if (!fs::exists(program)) {
        report.verdict(Verdict::NotBuilt, what,
                       say(N_("{0} is missing; build it with: ninja -C {1} tools/validate/conformance-compare"),
                           program.string(), run.kit.build.string()));
        return;
    }
    const fs::path markdown = run.work_dir / "conformance.md";
    std::error_code ignored;
    fs::create_directories(run.work_dir, ignored);
    fs::remove(markdown, ignored);
    // The GPUs validate uses reach it through CUDA_VISIBLE_DEVICES, which validate has set already.
    std::vector<std::string> argv = {program.string(), "--markdown", markdown.string()};
    if (run.real_is_sim) argv.insert(argv.end(), {"--real-side", "sim"});
    // --quick: two short programs, enough to show the comparison works end to end.
    if (run.quick) argv.insert(argv.end(), {"--program", "errors", "--program", "no-driver"});
    report.line(say(N_("Running `{}`"), shell_quote(argv)));
    const Captured result = capture(argv);
    if (!result.started) {
        report.verdict(Verdict::NotBuilt, what, result.start_error);
        return;
    }
    std::ifstream section(markdown);
    if (section) {
        // Its own markdown section becomes a subsection of this one; the terminal gets its output.
        report.terminal_only(last_lines(result.output, 25) + "\n");
        std::string text, line;
        while (std::getline(section, line)) text += (line.rfind("## ", 0) == 0 ? "#" + line : line) + "\n";
        report.markdown_only(text);
    } else {
        report.preformatted(last_lines(result.output, 25));
    }
    const std::string last = last_lines(result.output, 1);
    if (succeeded(result)) {
        report.verdict(Verdict::Agrees, what, last);
    } else if (result.exited && result.exit_code == 1) {
        report.verdict(Verdict::Differs, what, last);
    } else if (result.exited && result.exit_code == 4) {
        report.verdict(Verdict::Differs, what, say(N_("the real side could not run on this machine: {}"), last));
    } else {
        report.verdict(Verdict::Differs, what,
                       say(N_("conformance-compare ended with {0}: {1}"), describe_end(result), last));
    }
}

}  // namespace mgpu::cli
