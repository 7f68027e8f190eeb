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
        throw UsageError(label + " holds no .cu or .cpp file to build");
    return sources;
}

}  // namespace

ProgramSources program_sources(const Kit& kit, const std::vector<std::string>& targets) {
    if (targets.empty()) throw UsageError("say what to run: .cu files, a folder, or a lesson number");
    std::error_code error;
    if (targets.size() > 1 || fs::is_regular_file(targets.front(), error)) {
        ProgramSources sources;
        for (const auto& target : targets) {
            fs::path path(target);
            if (fs::is_directory(path, error))
                throw UsageError(target + " is a folder: give either one folder or several files, not both");
            if (!fs::is_regular_file(path, error))
                throw UsageError("there is no file '" + target + "'");
            if (!is_source(path))
                throw UsageError(target + " is not a CUDA or C++ source file: give .cu, .cpp or .cc files, a folder "
                                 "or a lesson number (headers are found through #include and -I)");
            const fs::path file = fs::absolute(path).lexically_normal();
            if (std::find(sources.files.begin(), sources.files.end(), file) != sources.files.end())
                throw UsageError(target + " is named twice");
            sources.files.push_back(file);
        }
        sources.folder = sources.files.front().parent_path();
        sources.label = targets.front() + (targets.size() > 1 ? " (and " + std::to_string(targets.size() - 1) +
                                                                   " more file" + (targets.size() > 2 ? "s)" : ")")
                                                              : "");
        return sources;
    }
    const std::string& target = targets.front();
    fs::path path(target);
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
