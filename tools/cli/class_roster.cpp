#include "class_roster.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "exit_codes.h"
#include "sha256.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

std::vector<Student> list_students(const fs::path& class_dir, const fs::path& skip) {
    std::error_code error;
    const fs::path skipped = fs::weakly_canonical(skip, error);
    std::vector<Student> students;
    for (const auto& entry : fs::directory_iterator(class_dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.empty() || name.front() == '.' || !entry.is_directory(error)) continue;
        if (!skip.empty() && fs::weakly_canonical(entry.path(), error) == skipped) continue;
        students.push_back({name, entry.path()});
    }
    if (error) throw SetupError("cannot list the class folder " + class_dir.string() + ": " + error.message());
    std::sort(students.begin(), students.end(), [](const Student& a, const Student& b) { return a.name < b.name; });
    return students;
}

std::string folder_content_hash(const fs::path& folder) {
    std::vector<fs::path> files;
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        if (it->is_regular_file(error)) files.push_back(fs::relative(it->path(), folder, error));
    }
    std::sort(files.begin(), files.end());
    seal::Sha256 hash;
    for (const auto& relative : files) {
        std::ifstream file(folder / relative, std::ios::binary);
        std::string content((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        // Lengths delimit the fields, so no two different folders feed the hash the same bytes.
        hash.update(std::to_string(relative.string().size()) + ":" + relative.string() + ":" +
                    std::to_string(content.size()) + ":");
        hash.update(content);
    }
    return hash.hex_digest();
}

std::vector<Student> chunk_of(const std::vector<Student>& students, int part, int parts) {
    const std::size_t count = students.size();
    const std::size_t begin = count * static_cast<std::size_t>(part - 1) / static_cast<std::size_t>(parts);
    const std::size_t end = count * static_cast<std::size_t>(part) / static_cast<std::size_t>(parts);
    return std::vector<Student>(students.begin() + static_cast<std::ptrdiff_t>(begin),
                                students.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace mgpu::cli
