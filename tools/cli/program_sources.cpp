#include "program_sources.h"

#include <algorithm>

#include "exit_codes.h"
#include "lessons.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

bool is_source(const fs::path& file) {
    const std::string extension = file.extension().string();
    return extension == ".cu" || extension == ".cpp" || extension == ".cc";
}

ProgramSources folder_sources(const fs::path& folder, const std::string& label) {
    ProgramSources sources;
    sources.folder = fs::absolute(folder).lexically_normal();
    sources.label = label;
    for (const auto& entry : fs::directory_iterator(sources.folder))
        if (entry.is_regular_file() && is_source(entry.path())) sources.files.push_back(entry.path());
    std::sort(sources.files.begin(), sources.files.end());
    if (sources.files.empty())
        throw UsageError(label + " holds no .cu file to build");
    return sources;
}

}  // namespace

ProgramSources program_sources(const Kit& kit, const std::string& target) {
    std::error_code error;
    fs::path path(target);
    if (fs::is_regular_file(path, error)) {
        if (!is_source(path))
            throw UsageError(target + " is not a CUDA source file: give a .cu file, a folder or a lesson number");
        ProgramSources sources;
        sources.files.push_back(fs::absolute(path).lexically_normal());
        sources.folder = sources.files.front().parent_path();
        sources.label = target;
        return sources;
    }
    if (fs::is_directory(path, error)) return folder_sources(path, target);

    if (auto number = parse_lesson_number(target)) {
        fs::path exercises = kit.root / "exercises";
        auto folder = lesson_folder(exercises, *number);
        if (!folder) throw UsageError(no_such_lesson(exercises, *number));
        return folder_sources(*folder, "exercises/" + folder->filename().string());
    }
    throw UsageError("there is no file or folder '" + target + "', and it is not a lesson number");
}

}  // namespace mgpu::cli
