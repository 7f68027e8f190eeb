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

// Whether a file holds anything the rewriter changes: a launch, a __shared__ declaration or
// __noinline__ (a loose test: a file that only looks like it is copied needlessly, no harm done).
bool needs_rewriting(const std::vector<Token>& tokens) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (is_identifier(tokens[i], "__shared__") || is_identifier(tokens[i], "__noinline__")) return true;
        if (i + 2 < tokens.size() && is_punct(tokens[i], '<') && is_punct(tokens[i + 1], '<') && is_punct(tokens[i + 2], '<'))
            return true;
    }
    return false;
}

// Whether a file declares or uses one of the device variables (its uses are rewritten too).
bool names_any(const std::vector<Token>& tokens, const std::set<std::string>& names) {
    if (names.empty()) return false;
    for (const Token& token : tokens)
        if (token.kind == TokenKind::Identifier && names.count(std::string(token.text)) > 0) return true;
    return false;
}

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

    std::map<IncludeKey, std::size_t> included;   // (including file, name, angled) -> file index

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
            included[{f, include.name, include.angled}] = known->second;
        }
    }

    // A header is copied (rewritten) when it holds something to rewrite or includes a header
    // that is copied; any other is included from where it is, so that it stays one file for
    // #pragma once and for the compiler's messages.
    // A file's own variables count from their declarations on; those of other files from the start.
    std::vector<std::set<std::string>> variables_of(files.size());
    std::set<std::string> device_variables;
    for (std::size_t f = 0; f < files.size(); ++f) {
        collect_device_variables(files[f].tokens, variables_of[f]);
        device_variables.insert(variables_of[f].begin(), variables_of[f].end());
    }

    std::vector<bool> copied(files.size(), false);
    for (std::size_t f = 0; f < files.size(); ++f)
        copied[f] = f == 0 || needs_rewriting(files[f].tokens) || names_any(files[f].tokens, device_variables);
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [key, header] : included) {
            const std::size_t includer = std::get<0>(key);
            if (copied[header] && !copied[includer]) copied[includer] = changed = true;
        }
    }

    std::set<std::string> kernel_templates;
    std::set<std::string> kernels_with_default_arguments;
    FunctionSides sides;
    for (const SourceFile& file : files) {
        collect_kernel_templates(file.tokens, kernel_templates);
        collect_kernels_with_default_arguments(file.tokens, kernels_with_default_arguments);
        collect_function_sides(file.tokens, sides);
    }
    for (const SourceFile& file : files) check_host_calls(file.tokens, sides, file.display);

    // Every file is rewritten before any is written, so an error leaves no partial output.
    std::vector<std::string> rewritten(files.size());
    for (std::size_t f = 0; f < files.size(); ++f) {
        if (!copied[f]) continue;
        FileRewrite how;
        how.display_name = files[f].display;
        how.main_file = f == 0;
        how.kernel_templates = kernel_templates;
        for (std::size_t other = 0; other < files.size(); ++other)
            if (other != f) how.device_variables.insert(variables_of[other].begin(), variables_of[other].end());
        how.kernels_with_default_arguments = kernels_with_default_arguments;
        how.include_target = [&, f](const IncludeDirective& include) -> std::optional<std::string> {
            auto target = included.find({f, include.name, include.angled});
            if (target == included.end()) return std::nullopt;
            const SourceFile& header = files[target->second];
            return copied[target->second] ? header.output.string() : fs::absolute(header.path).lexically_normal().string();
        };
        rewritten[f] = rewrite_source(files[f].text, how);
    }
    for (std::size_t f = 0; f < files.size(); ++f)
        if (copied[f]) write_text(files[f].output, rewritten[f]);

    if (!invocation.depfile.empty()) {
        std::string rule = make_escaped(invocation.output) + ":";
        for (const SourceFile& file : files) rule.append(" ").append(make_escaped(file.path.string()));
        write_text(invocation.depfile, rule + "\n");
    }
}

}  // namespace cu2cpp
