// Lessons live in numbered folders (exercises/03-peer-to-peer, solutions/03-peer-to-peer);
// commands accept the number alone.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mgpu::cli {

// "3" or "03" -> 3; anything that is not a whole number from 1 to 99 -> nullopt.
std::optional<int> parse_lesson_number(const std::string& text);

// The folder of lesson `number` under `tree` (the NN-name folder), or nullopt.
std::optional<std::filesystem::path> lesson_folder(const std::filesystem::path& tree, int number);

// The lesson numbers that have a folder under `tree`, in order.
std::vector<int> lessons_in(const std::filesystem::path& tree);

// Why `number` is not a lesson under `tree`, listing the ones that are: for error messages.
std::string no_such_lesson(const std::filesystem::path& tree, int number);

}  // namespace mgpu::cli
