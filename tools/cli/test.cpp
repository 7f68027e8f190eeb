#include <filesystem>
#include <iostream>

#include "command.h"
#include "exit_codes.h"
#include "process.h"
#include "test_summary.h"
#include "test_tsan.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

ExitStatus run_suite(const Kit& kit, const std::vector<std::string>& names) {
    // Each test's timeout in meson.build is about ten times what it needs on an idle machine; the
    // multiplier makes it a backstop that a busy machine never reaches. What a test checks never
    // depends on time: the judge limits CPU time, not the wall clock.
    std::vector<std::string> argv = {"meson", "test", "-C", kit.build.string(), "--suite", "kit",
                                     "--print-errorlogs", "--num-processes", "2", "--timeout-multiplier", "5"};
    argv.insert(argv.end(), names.begin(), names.end());
    return run_process(argv);
}

int test(const Kit& kit, const ParsedArgs& args) {
    const bool tsan = args.flags.count("--tsan") > 0;
    const fs::path testlog = (tsan ? tsan_build_folder(kit) : kit.build) / "meson-logs" / "testlog.json";
    std::error_code ignored;
    fs::remove(testlog, ignored);  // a log found afterwards is this run's

    ExitStatus meson = tsan ? run_tests_under_tsan(kit, args.positionals) : run_suite(kit, args.positionals);
    if (!fs::exists(testlog))
        throw SetupError(fill(tr("meson test ran no test ({}): the kit's tests did not build, or no test has the names "
                                 "given; see above"),
                              meson.describe()));

    SuiteTally result = tally(read_testlog(testlog));
    if (!meson.ok() && result.failed == 0) {
        result.problems.push_back("meson test: " + fill(tr("ended with {} although no test failed"), meson.describe()));
        ++result.failed;
    }
    std::cout << "\n" << tally_report(result) << std::flush;
    return (result.failed == 0 && result.passed > 0) ? kExitOk : kExitFailed;
}

}  // namespace

const Command test_command = {
    N_("The kit itself"),
    {
        .name = "test",
        .usage = "test [--tsan] [TEST...]",
        .summary = N_("Runs the kit's own test suite and counts its test cases."),
        .description = N_("Runs every test of meson's 'kit' suite (or only the named ones), two at a time, then\n"
                       "sums the doctest test cases of all of them. The last line is always\n"
                       "'N passed, N failed'; the exit code is 0 only when nothing failed. --tsan builds the tests\n"
                       "that call the runtime from many host threads with ThreadSanitizer in a build folder of\n"
                       "their own (BUILD-tsan beside BUILD) and runs them there: a data race fails its test."),
        .options = {{"--tsan", "",
                     N_("run the thread tests (or the TESTs named) built with ThreadSanitizer in BUILD-tsan")}},
        .max_positionals = -1,
        .examples = "  tools/mgpu test\n  tools/mgpu test topology-presets\n  tools/mgpu test --tsan\n",
    },
    test,
};

}  // namespace mgpu::cli
