#include "test_tsan.h"

#include <iostream>

#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

const std::vector<std::string>& thread_tests() {
    static const std::vector<std::string> names = {"conformance-thread-stress", "conformance-threads"};
    return names;
}

fs::path tsan_build_folder(const Kit& kit) {
    return kit.build.parent_path() / (kit.build.filename().string() + "-tsan");
}

ExitStatus run_tests_under_tsan(const Kit& kit, const std::vector<std::string>& names) {
    const fs::path folder = tsan_build_folder(kit);
    if (!fs::exists(folder / "build.ninja")) {
        std::cout << "mgpu: " << fill(tr("configuring a ThreadSanitizer build in {} ..."), folder.string()) << "\n" << std::flush;
        // The real-GPU backend is left out: nvcc's objects carry no ThreadSanitizer instrumentation.
        const ExitStatus setup = run_process({"meson", "setup", folder.string(), kit.root.string(), "-Db_sanitize=thread",
                                              "-Dbuildtype=debugoptimized", "-Dcuda=disabled"});
        if (!setup.ok()) throw SetupError(fill(tr("meson could not configure {0} ({1})"), folder.string(), setup.describe()));
    }
    std::vector<std::string> build = {"ninja", "-C", folder.string()};
    // Only the programs of the tests asked for: building the whole kit with the sanitizer takes long.
    const std::vector<std::string>& chosen = names.empty() ? thread_tests() : names;
    for (const std::string& name : chosen)
        if (name.rfind("conformance-", 0) == 0) build.push_back("tests/conformance/" + name);
    if (build.size() < 3 + chosen.size()) build.resize(3);   // a test outside conformance/: build everything
    std::cout << "mgpu: "
              << (build.size() > 3 ? tr("building the thread tests with ThreadSanitizer ...")
                                   : tr("building the kit with ThreadSanitizer ..."))
              << "\n" << std::flush;
    const ExitStatus built = run_process(build);
    if (!built.ok()) throw SetupError(fill(tr("the ThreadSanitizer build failed ({}); see above"), built.describe()));

    std::vector<std::string> argv = {"meson", "test", "-C", folder.string(), "--no-rebuild", "--suite", "kit",
                                     "--print-errorlogs", "--num-processes", "1", "--timeout-multiplier", "10"};
    argv.insert(argv.end(), chosen.begin(), chosen.end());
    SpawnOptions options;
    // A race report fails the test at once, with the stacks of both accesses.
    options.environment.emplace_back("TSAN_OPTIONS", "halt_on_error=1 second_deadlock_stack=1");
    return run_process(argv, options);
}

}  // namespace mgpu::cli
