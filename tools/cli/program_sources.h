// What `run` builds: CUDA and C++ files named one by one, every such file of a folder, or a
// lesson's exercise folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kit.h"

namespace mgpu::cli {

struct ProgramSources {
    std::vector<std::filesystem::path> files;  // absolute paths of .cu (and plain C++) files
    std::filesystem::path folder;              // the first file's folder: searched for the headers they include
    std::string label;                         // how messages name the program
};

// `targets` is one or more .cu/.cpp files (built into one program, as a CMake target lists its
// sources), one folder, or one lesson number (3 -> exercises/03-*/). Throws UsageError saying
// what was looked for.
ProgramSources program_sources(const Kit& kit, const std::vector<std::string>& targets);

}  // namespace mgpu::cli
