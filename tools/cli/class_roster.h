// A class folder: one folder per student, each laid out as `grade` accepts. The roster lists
// them in a fixed order and fingerprints each one's files, so that a student whose files did not
// change since the last grading can be served from the gradebook's cache.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mgpu::cli {

struct Student {
    std::string name;               // the folder's name, as the gradebook shows it
    std::filesystem::path folder;
};

// Every folder directly under `class_dir`, sorted by name (byte order, so the same on every
// machine). Hidden folders (.git) and `skip` (the output folder, when it lies inside) are left out.
std::vector<Student> list_students(const std::filesystem::path& class_dir, const std::filesystem::path& skip);

// SHA-256 over every regular file under `folder`: relative path and content, in sorted order.
// Renaming, adding, removing or editing any file changes it; timestamps do not.
std::string folder_content_hash(const std::filesystem::path& folder);

// The students of chunk `part` (1-based) of `parts` equal chunks, in roster order: what one task
// of a cluster array job grades.
std::vector<Student> chunk_of(const std::vector<Student>& students, int part, int parts);

}  // namespace mgpu::cli
