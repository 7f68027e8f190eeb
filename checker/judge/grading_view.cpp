#include "grading_view.h"

#include <algorithm>
#include <filesystem>

namespace mgpu::judge {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& path, const fs::path& dir) {
    auto [dir_end, path_at] = std::mismatch(dir.begin(), dir.end(), path.begin(), path.end());
    return dir_end == dir.end();
}

fs::path normal(const std::string& path) {
    std::error_code error;
    fs::path canonical = fs::weakly_canonical(fs::absolute(path, error), error);
    return error ? fs::path(path).lexically_normal() : canonical;
}

}  // namespace

GradingView grading_view(const GradingViewFolders& folders) {
    // Folders the system needs: emptying one of them (or a folder above it) would take the
    // compiler or the C library away, so a kit or class folder placed there stays visible.
    std::vector<fs::path> needed = {"/usr", "/etc", "/lib", "/lib64", "/bin", "/sbin", "/dev", "/proc", "/sys", "/tmp"};
    for (const auto& tool : folders.toolchain) {
        if (!tool.empty()) needed.push_back(normal(tool).parent_path());
    }

    std::vector<fs::path> candidates;
    for (const auto& dir : {folders.kit_root, folders.build_root, folders.lessons_dir, folders.lessons_build_dir,
                            folders.cache_dir}) {
        if (!dir.empty()) candidates.push_back(normal(dir));
    }
    if (!folders.submission_dir.empty()) {
        const fs::path submission = normal(folders.submission_dir);
        candidates.push_back(submission);
        candidates.push_back(submission.parent_path());   // the class folder: the other students
    }

    GradingView view;
    std::error_code error;
    for (const auto& dir : candidates) {
        if (dir.empty() || dir == dir.root_path() || !fs::is_directory(dir, error)) continue;
        bool holds_needed = false;
        for (const auto& system : needed) holds_needed = holds_needed || inside(system, dir);
        if (holds_needed) continue;
        if (std::find(view.hidden_dirs.begin(), view.hidden_dirs.end(), dir.string()) == view.hidden_dirs.end()) {
            view.hidden_dirs.push_back(dir.string());
        }
    }
    // Shown again with an archive's folder or the exercise folder, and hidden once more.
    for (const auto& [root, name] : {std::pair{folders.lessons_build_dir, "mutants"}, std::pair{folders.lessons_dir, "master"}}) {
        if (root.empty()) continue;
        for (auto it = fs::directory_iterator(root, error); !error && it != fs::directory_iterator(); it.increment(error)) {
            if (fs::is_directory(it->path() / name, error)) view.hidden_again.push_back((it->path() / name).string());
        }
    }
    if (!folders.kit_root.empty()) view.hidden_again.push_back((normal(folders.kit_root) / "solutions").string());
    return view;
}

}  // namespace mgpu::judge
