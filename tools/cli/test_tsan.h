// `mgpu test --tsan`: the kit's thread tests built with ThreadSanitizer in a build folder of their
// own, so that a data race inside the simulator fails the test that provoked it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kit.h"
#include "process.h"

namespace mgpu::cli {

// The tests `--tsan` runs when none are named: those that call the runtime from several threads.
const std::vector<std::string>& thread_tests();

// The ThreadSanitizer build folder beside the kit's own: BUILD-tsan.
std::filesystem::path tsan_build_folder(const Kit& kit);

// Configures the folder if needed, builds the named tests (meson test names) or, with none named,
// the thread tests, and runs them through meson test. Returns meson test's exit status; throws
// SetupError when the folder cannot be configured or built.
ExitStatus run_tests_under_tsan(const Kit& kit, const std::vector<std::string>& names);

}  // namespace mgpu::cli
