// What the rewriter learns from a file before rewriting: its kernel templates and its includes.
#include <cstddef>
#include <optional>
#include <string_view>

#include "rewriter.h"

namespace cu2cpp {
namespace {

bool attribute_word(const Token& token) {
    return is_identifier(token, "__launch_bounds__") || is_identifier(token, "__attribute__") ||
           is_identifier(token, "alignas") || is_identifier(token, "__align__") || is_identifier(token, "__declspec");
}

std::size_t next_significant(const std::vector<Token>& tokens, std::size_t i) {
    while (i < tokens.size() && (is_blank(tokens[i]) || tokens[i].in_directive)) ++i;
    return i;
}

// Index just past the parenthesised group that starts at or after i.
std::size_t skip_group(const std::vector<Token>& tokens, std::size_t i) {
    i = next_significant(tokens, i);
    if (i >= tokens.size() || !is_punct(tokens[i], '(')) return i;
    int depth = 0;
    for (; i < tokens.size(); ++i) {
        if (tokens[i].in_directive || is_blank(tokens[i])) continue;
        if (is_punct(tokens[i], '(')) ++depth;
        if (is_punct(tokens[i], ')') && --depth == 0) return i + 1;
    }
    return i;
}

// Whether the declaration holding tokens[at] starts with `template`.
bool declared_as_template(const std::vector<Token>& tokens, std::size_t at) {
    std::size_t first = at;
    for (std::size_t i = at; i-- > 0;) {
        const Token& token = tokens[i];
        if (token.in_directive || is_blank(token)) continue;
        if (is_punct(token, ';') || is_punct(token, '{') || is_punct(token, '}')) break;
        first = i;
    }
    return is_identifier(tokens[first], "template");
}

}  // namespace

namespace {

struct KernelDeclaration {
    std::size_t name = 0;          // index of the kernel's name
    std::size_t parameters = 0;    // index of the '(' that opens its parameter list
};

// The name and parameter list of the __global__ function declared at tokens[at], if any.
std::optional<KernelDeclaration> kernel_declared_at(const std::vector<Token>& tokens, std::size_t at) {
    std::size_t last_identifier = tokens.size();
    for (std::size_t j = next_significant(tokens, at + 1); j < tokens.size(); j = next_significant(tokens, j + 1)) {
        const Token& token = tokens[j];
        if (attribute_word(token)) {
            j = skip_group(tokens, j + 1) - 1;
            continue;
        }
        if (is_punct(token, '<')) {   // explicit specialization: k<float>(...)
            int depth = 0;
            for (; j < tokens.size(); ++j) {
                if (is_punct(tokens[j], '<')) ++depth;
                if (is_punct(tokens[j], '>') && --depth == 0) break;
            }
            continue;
        }
        if (is_punct(token, '(')) {
            if (last_identifier < tokens.size()) return KernelDeclaration{last_identifier, j};
            return std::nullopt;
        }
        if (is_punct(token, ';') || is_punct(token, '{')) return std::nullopt;
        if (token.kind == TokenKind::Identifier) last_identifier = j;
    }
    return std::nullopt;
}

// Whether the parameter list opened at tokens[open] gives a parameter a default value: an '=' at
// the list's own level, outside brackets and template arguments, that is not part of ==, <=, ...
bool has_default_argument(const std::vector<Token>& tokens, std::size_t open) {
    int depth = 0;
    for (std::size_t j = open; j < tokens.size(); ++j) {
        const Token& token = tokens[j];
        if (token.in_directive || is_blank(token)) continue;
        if (is_punct(token, '(') || is_punct(token, '[') || is_punct(token, '{') || is_punct(token, '<')) ++depth;
        if (is_punct(token, ')') || is_punct(token, ']') || is_punct(token, '}') || is_punct(token, '>')) {
            if (--depth == 0) return false;
        }
        if (depth != 1 || !is_punct(token, '=')) continue;
        const bool joined_before = j > 0 && tokens[j - 1].kind == TokenKind::Punct &&
                                   std::string_view("=!<>+-*/%&|^").find(tokens[j - 1].text.front()) != std::string_view::npos;
        const bool joined_after = j + 1 < tokens.size() && is_punct(tokens[j + 1], '=');
        if (!joined_before && !joined_after) return true;
    }
    return false;
}

}  // namespace

void collect_kernel_templates(const std::vector<Token>& tokens, std::set<std::string>& names) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].in_directive || !is_identifier(tokens[i], "__global__")) continue;
        if (!declared_as_template(tokens, i)) continue;
        if (auto kernel = kernel_declared_at(tokens, i)) names.insert(std::string(tokens[kernel->name].text));
    }
}

void collect_kernels_with_default_arguments(const std::vector<Token>& tokens, std::set<std::string>& names) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].in_directive || !is_identifier(tokens[i], "__global__")) continue;
        auto kernel = kernel_declared_at(tokens, i);
        if (kernel && has_default_argument(tokens, kernel->parameters))
            names.insert(std::string(tokens[kernel->name].text));
    }
}

std::vector<IncludeDirective> find_includes(const std::vector<Token>& tokens) {
    std::vector<IncludeDirective> includes;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!tokens[i].in_directive || !is_punct(tokens[i], '#')) continue;
        std::size_t j = i + 1;
        while (j < tokens.size() && tokens[j].in_directive && is_blank(tokens[j])) ++j;
        if (j >= tokens.size() || !is_identifier(tokens[j], "include")) continue;
        ++j;
        while (j < tokens.size() && tokens[j].in_directive && is_blank(tokens[j])) ++j;
        if (j >= tokens.size() || !tokens[j].in_directive) continue;
        const Token& name = tokens[j];
        const bool quoted = name.kind == TokenKind::String && name.text.front() == '"';
        if (!quoted && name.kind != TokenKind::HeaderName) continue;
        if (name.text.size() < 2) continue;
        includes.push_back({std::string(name.text.substr(1, name.text.size() - 2)), !quoted, name.line});
    }
    return includes;
}

}  // namespace cu2cpp
