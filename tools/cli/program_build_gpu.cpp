#include "program_build_gpu.h"

#include "compile_hint.h"
#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

BuiltProgram build_program_for_gpus(const Kit& kit, const ProgramSources& sources, const CompileOptions& options,
                                    const fs::path& folder) {
    const std::vector<std::string> nvcc = kit.gpu_nvcc();
    if (nvcc.empty())
        throw SetupError(tr("this kit was configured without nvcc and CUPTI (the CUDA Toolkit), so it cannot build "
                            "for real GPUs; install the CUDA Toolkit and run tools/mgpu again, or leave out "
                            "--backend cuda to use the simulator"));
    for (const auto& library : kit.gpu_libraries())
        if (!fs::exists(library))
            throw SetupError(library.string() + " has not been built yet; tools/mgpu builds it (or run: ninja -C " +
                             kit.build.string() + ")");
    fs::create_directories(folder);

    BuiltProgram result;
    result.executable = folder / "program";
    std::vector<std::string> link = kit.compiler();
    std::vector<BuildStep> compiles;   // side by side, as run's own build
    for (std::size_t index = 0; index < sources.files.size(); ++index) {
        const fs::path& file = sources.files[index];
        const fs::path object = folder / (std::to_string(index) + "-" + file.filename().string() + ".o");
        std::vector<std::string> compile = nvcc;
        const std::vector<std::string> flags = kit.gpu_nvcc_flags();
        compile.insert(compile.end(), flags.begin(), flags.end());
        compile.push_back("-I" + sources.folder.string());
        for (const auto& include : options.include_dirs) compile.push_back("-I" + include.string());
        for (const auto& define : options.defines) compile.push_back("-D" + define);
        compile.insert(compile.end(), {"-c", file.string(), "-o", object.string()});
        compiles.push_back({compile, folder / (object.filename().string() + ".log")});
        link.push_back(object.string());
    }
    link.insert(link.end(), {"-o", result.executable.string()});
    for (const auto& library : kit.gpu_libraries()) link.push_back(library.string());
    const std::vector<std::string> link_flags = kit.gpu_link_flags();
    link.insert(link.end(), link_flags.begin(), link_flags.end());
    result.ok = run_steps(compiles, result.diagnostics) && run_steps({{link, folder / "link.log"}}, result.diagnostics);
    if (!result.ok) result.hint = compile_hint(result.diagnostics);
    return result;
}

}  // namespace mgpu::cli
