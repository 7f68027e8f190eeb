// What `run` builds: one CUDA file, every CUDA file of a folder, or a lesson's exercise folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kit.h"

namespace mgpu::cli {

struct ProgramSources {
    std::vector<std::filesystem::path> files;  // absolute paths of .cu (and plain C++) files, sorted
    std::filesystem::path folder;              // their folder: searched for the headers they include
    std::string label;                         // how messages name the program
};

// `target` is a .cu file, a folder, or a lesson number (3 -> exercises/03-*/). Throws UsageError
// saying what was looked for.
ProgramSources program_sources(const Kit& kit, const std::string& target);

}  // namespace mgpu::cli
