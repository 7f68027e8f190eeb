// What the rewriter learns from a file before rewriting: its kernel templates and its includes.
#include <cstddef>

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

void collect_kernel_templates(const std::vector<Token>& tokens, std::set<std::string>& names) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].in_directive || !is_identifier(tokens[i], "__global__")) continue;
        if (!declared_as_template(tokens, i)) continue;
        // The kernel's name is the identifier in front of the parameter list.
        std::size_t last_identifier = tokens.size();
        for (std::size_t j = next_significant(tokens, i + 1); j < tokens.size(); j = next_significant(tokens, j + 1)) {
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
                if (last_identifier < tokens.size()) names.insert(std::string(tokens[last_identifier].text));
                break;
            }
            if (is_punct(token, ';') || is_punct(token, '{')) break;
            if (token.kind == TokenKind::Identifier) last_identifier = j;
        }
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
