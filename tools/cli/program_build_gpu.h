// Builds a CUDA program for the real GPUs of this machine, as nvcc would build it, with the CUPTI
// recorder linked in (tools/cupti/program_recorder.cpp) so that a run can be drawn as a timeline.
#pragma once

#include <filesystem>
#include <functional>

#include "kit.h"
#include "program_build.h"
#include "program_sources.h"

namespace mgpu::cli {

// Throws SetupError when the kit was configured without nvcc and CUPTI. The program is built in
// `folder`, which the caller removes when done with it.
BuiltProgram build_program_for_gpus(const Kit& kit, const ProgramSources& sources, const CompileOptions& options,
                                    const std::filesystem::path& folder);

}  // namespace mgpu::cli
