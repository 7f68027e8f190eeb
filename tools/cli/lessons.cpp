#include "lessons.h"

#include <algorithm>
#include <cctype>

#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// The number a lesson folder's name starts with ("03-peer-to-peer" -> 3), or nullopt.
std::optional<int> folder_number(const std::string& name) {
    std::size_t digits = 0;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
    if (digits == 0 || digits > 2 || digits >= name.size() || name[digits] != '-') return std::nullopt;
    return std::stoi(name.substr(0, digits));
}

}  // namespace

std::optional<int> parse_lesson_number(const std::string& text) {
    if (text.empty() || text.size() > 2) return std::nullopt;
    if (!std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) return std::nullopt;
    int number = std::stoi(text);
    if (number < 1) return std::nullopt;
    return number;
}

std::optional<fs::path> lesson_folder(const fs::path& tree, int number) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(tree, error)) {
        if (!entry.is_directory()) continue;
        if (folder_number(entry.path().filename().string()) == number) return entry.path();
    }
    return std::nullopt;
}

std::vector<int> lessons_in(const fs::path& tree) {
    std::vector<int> numbers;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(tree, error)) {
        if (!entry.is_directory()) continue;
        if (auto number = folder_number(entry.path().filename().string())) numbers.push_back(*number);
    }
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    return numbers;
}

std::string no_such_lesson(const fs::path& tree, int number) {
    std::string list;
    for (int lesson : lessons_in(tree)) list += (list.empty() ? "" : ", ") + std::to_string(lesson);
    return fill(tr("there is no lesson {} in {} (lessons there: {})"), number, tree.string(), list.empty() ? tr("none") : list);
}

}  // namespace mgpu::cli
