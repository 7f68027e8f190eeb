// Builds a CUDA program against the simulator: each .cu goes through the launch rewriter, then
// the C++ compiler; the objects are linked with the simulator's libraries. Builds are cached
// under build/run-cache by a hash of everything that goes into them.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kit.h"
#include "program_sources.h"

namespace mgpu::cli {

struct BuiltProgram {
    bool ok = false;
    std::filesystem::path executable;
    std::string diagnostics;  // what the tools said: errors on failure, warnings on success
    std::string hint;         // one line on what to do, when the build failed
};

// What the user adds to every compile, as nvcc's and g++'s own options do.
struct CompileOptions {
    std::vector<std::filesystem::path> include_dirs;  // -I DIR, searched before the simulator's headers
    std::vector<std::string> defines;                 // -D NAME[=VALUE]
};

// One run of a build tool, its output kept in `log`.
struct BuildStep {
    std::vector<std::string> argv;
    std::filesystem::path log;
};

// Runs the steps side by side; returns false if any failed, and appends what each one said. The
// tools speak English whatever language the kit speaks, as nvcc does.
bool run_steps(const std::vector<BuildStep>& steps, std::string& diagnostics);

// `before_building` is called when the program is not in the cache and is about to be compiled.
BuiltProgram build_program(const Kit& kit, const ProgramSources& sources, const CompileOptions& options = {},
                           const std::function<void()>& before_building = {});

}  // namespace mgpu::cli
