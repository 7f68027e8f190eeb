#include "translation.h"

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "rewriter.h"

namespace cu2cpp {
namespace {

namespace fs = std::filesystem;

struct SourceFile {
    fs::path path;          // where it is read from
    std::string display;    // the name #line gives it
    fs::path output;        // where its rewritten text goes
    std::string text;
    std::vector<Token> tokens;
};

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
    if (path.has_parent_path()) fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write '" + path.string() + "'");
}

// Spaces, '#' and '$' are special in Makefile rules.
std::string make_escaped(const std::string& path) {
    std::string escaped;
    for (char c : path) {
        if (c == ' ' || c == '#') escaped += '\\';
        if (c == '$') escaped += '$';
        escaped += c;
    }
    return escaped;
}

using IncludeKey = std::tuple<std::size_t, std::string, bool>;   // including file, name, angled

}  // namespace

void translate(const Invocation& invocation) {
    // A deque keeps each file where it is, so the tokens' views of its text stay valid.
    std::deque<SourceFile> files;
    files.push_back({invocation.input, invocation.display_name.empty() ? invocation.input : invocation.display_name,
                     invocation.output, read_text(invocation.input), {}});
    files.front().tokens = tokenize(files.front().text);

    const fs::path output = invocation.output;
    const fs::path header_folder = fs::absolute(output).parent_path() / (output.filename().string() + ".headers");
    std::map<std::string, std::size_t> file_by_path;
    std::map<IncludeKey, std::string> include_targets;

    for (std::size_t f = 0; f < files.size(); ++f) {
        for (const IncludeDirective& include : find_includes(files[f].tokens)) {
            std::optional<fs::path> found;
            bool beside_includer = false;
            if (!include.angled) {
                const fs::path candidate = files[f].path.parent_path() / include.name;
                if (fs::is_regular_file(candidate)) {
                    found = candidate;
                    beside_includer = true;
                }
            }
            for (const std::string& dir : invocation.include_dirs) {
                if (found) break;
                const fs::path candidate = fs::path(dir) / include.name;
                if (fs::is_regular_file(candidate)) found = candidate;
            }
            if (!found) continue;   // a system header, or one only the compiler's -I finds

            const std::string key = fs::weakly_canonical(*found).string();
            auto known = file_by_path.find(key);
            if (known == file_by_path.end()) {
                const std::size_t index = files.size();
                const std::string display =
                    beside_includer ? (fs::path(files[f].display).parent_path() / include.name).lexically_normal().string()
                                    : found->string();
                files.push_back({*found, display,
                                 header_folder / (std::to_string(index) + "_" + found->filename().string()),
                                 read_text(*found), {}});
                files.back().tokens = tokenize(files.back().text);
                known = file_by_path.emplace(key, index).first;
            }
            include_targets[{f, include.name, include.angled}] = files[known->second].output.string();
        }
    }

    std::set<std::string> kernel_templates;
    for (const SourceFile& file : files) collect_kernel_templates(file.tokens, kernel_templates);

    // Every file is rewritten before any is written, so an error leaves no partial output.
    std::vector<std::string> rewritten;
    for (std::size_t f = 0; f < files.size(); ++f) {
        FileRewrite how;
        how.display_name = files[f].display;
        how.main_file = f == 0;
        how.kernel_templates = kernel_templates;
        how.include_target = [&, f](const IncludeDirective& include) -> std::optional<std::string> {
            auto target = include_targets.find({f, include.name, include.angled});
            if (target == include_targets.end()) return std::nullopt;
            return target->second;
        };
        rewritten.push_back(rewrite_source(files[f].text, how));
    }
    for (std::size_t f = 0; f < files.size(); ++f) write_text(files[f].output, rewritten[f]);

    if (!invocation.depfile.empty()) {
        std::string rule = make_escaped(invocation.output) + ":";
        for (const SourceFile& file : files) rule.append(" ").append(make_escaped(file.path.string()));
        write_text(invocation.depfile, rule + "\n");
    }
}

}  // namespace cu2cpp
