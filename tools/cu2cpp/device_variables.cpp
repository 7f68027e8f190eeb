// Reading `__device__` and `__constant__` variable declarations at namespace scope, which the
// rewriter turns into per-device variables (see mgpu/sim/device_symbol.h).
#include <cstddef>

#include "rewriter.h"

namespace cu2cpp {
namespace {

bool significant(const Token& token) { return !is_blank(token) && !token.in_directive; }

bool attribute_word(const Token& token) {
    return is_identifier(token, "__attribute__") || is_identifier(token, "alignas") ||
           is_identifier(token, "__align__") || is_identifier(token, "__declspec") ||
           is_identifier(token, "__launch_bounds__");
}

bool qualifier_word(const Token& token) {
    return is_identifier(token, "__device__") || is_identifier(token, "__constant__");
}

// The significant token before i that is not part of a preprocessor directive, or npos.
std::size_t previous_significant(const std::vector<Token>& tokens, std::size_t i) {
    while (i-- > 0)
        if (significant(tokens[i])) return i;
    return static_cast<std::size_t>(-1);
}

// Whether the `{` at `open` opens a namespace or an `extern "C"` block: declarations directly
// inside it are at namespace scope.
bool opens_namespace(const std::vector<Token>& tokens, std::size_t open) {
    std::size_t at = previous_significant(tokens, open);
    while (at != static_cast<std::size_t>(-1)) {
        const Token& token = tokens[at];
        if (is_identifier(token, "namespace")) return true;
        if (token.kind == TokenKind::String) {
            const std::size_t before = previous_significant(tokens, at);
            return before != static_cast<std::size_t>(-1) && is_identifier(tokens[before], "extern");
        }
        // `namespace a::b {`, `namespace a {`, `inline namespace v1 {`
        if (token.kind != TokenKind::Identifier && !(token.kind == TokenKind::Punct && token.text == "::")) return false;
        at = previous_significant(tokens, at);
    }
    return false;
}

}  // namespace

std::vector<bool> namespace_scope(const std::vector<Token>& tokens) {
    std::vector<bool> scope(tokens.size(), true);
    std::vector<bool> braces;   // per open brace: whether it opened a namespace
    std::size_t other_braces = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        scope[i] = other_braces == 0;
        if (!significant(tokens[i])) continue;
        if (is_punct(tokens[i], '{')) {
            braces.push_back(opens_namespace(tokens, i));
            if (!braces.back()) ++other_braces;
        } else if (is_punct(tokens[i], '}') && !braces.empty()) {
            if (!braces.back()) --other_braces;
            braces.pop_back();
        }
    }
    return scope;
}

std::optional<DeviceVariableDeclaration> read_device_variable(const std::vector<Token>& tokens, std::size_t at) {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    DeviceVariableDeclaration declaration;
    declaration.first = at;
    for (std::size_t i = previous_significant(tokens, at); i != npos; i = previous_significant(tokens, i)) {
        if (is_punct(tokens[i], ';') || is_punct(tokens[i], '{') || is_punct(tokens[i], '}')) break;
        declaration.first = i;
    }
    // Variable templates and declarations the rewriter has no form for are left as they are.
    if (is_identifier(tokens[declaration.first], "template")) return std::nullopt;

    int depth = 0;                 // (), [] and {}
    int angles = 0;                // <> of the type, before the first declarator's name
    bool in_specifiers = true;     // still before the first `=`, `[` or `{`
    std::size_t last_identifier = npos;
    bool name_taken = false;       // this declarator's name is known
    for (std::size_t i = declaration.first; i < tokens.size(); ++i) {
        const Token& token = tokens[i];
        if (!significant(token)) continue;
        if (depth == 0 && attribute_word(token)) {
            std::size_t open = i + 1;
            while (open < tokens.size() && !significant(tokens[open])) ++open;
            if (open < tokens.size() && is_punct(tokens[open], '(')) {
                int inner = 0;
                for (i = open; i < tokens.size(); ++i) {
                    if (is_punct(tokens[i], '(')) ++inner;
                    if (is_punct(tokens[i], ')') && --inner == 0) break;
                }
            }
            continue;
        }
        if (token.kind == TokenKind::Identifier) {
            if (depth == 0 && !name_taken) last_identifier = i;
            if (is_identifier(token, "static")) declaration.is_static = true;
            if (is_identifier(token, "extern")) declaration.is_extern = true;
            if (is_identifier(token, "inline")) declaration.is_inline = true;
            if (is_identifier(token, "__constant__")) declaration.constant = true;
            if (is_identifier(token, "constexpr") || is_identifier(token, "typedef") || is_identifier(token, "using") ||
                is_identifier(token, "__managed__") || is_identifier(token, "operator"))
                return std::nullopt;
            continue;
        }
        if (token.kind != TokenKind::Punct) continue;
        const char c = token.text.size() == 1 ? token.text[0] : '\0';
        if (in_specifiers && c == '<') ++angles;
        if (in_specifiers && c == '>') --angles;
        if (depth == 0 && angles == 0) {
            if (c == '(' && !name_taken) return std::nullopt;   // a function (or a declarator not handled)
            if ((c == '[' || c == '=' || c == '{' || c == ',' || c == ';') && !name_taken) {
                if (last_identifier == npos || qualifier_word(tokens[last_identifier])) return std::nullopt;
                declaration.names.push_back(last_identifier);
                name_taken = true;
                in_specifiers = false;
            }
            if (c == '=' || (c == '{' && !in_specifiers)) declaration.defines = true;
            if (c == ',') {
                name_taken = false;
                last_identifier = npos;
            }
            if (c == ';') {
                // The qualifier must stand among the specifiers (not in an initializer's lambda).
                if (declaration.names.empty() || at > declaration.names.front()) return std::nullopt;
                declaration.last = i;
                if (!declaration.is_extern) declaration.defines = true;
                return declaration;
            }
        }
        if (c == '(' || c == '[' || c == '{') ++depth;
        if (c == ')' || c == ']' || c == '}') {
            if (--depth < 0) return std::nullopt;
        }
    }
    return std::nullopt;
}

void collect_device_variables(const std::vector<Token>& tokens, std::set<std::string>& names) {
    const std::vector<bool> scope = namespace_scope(tokens);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!scope[i] || !significant(tokens[i]) || !qualifier_word(tokens[i])) continue;
        if (auto declaration = read_device_variable(tokens, i)) {
            for (std::size_t name : declaration->names) names.insert(std::string(tokens[name].text));
            i = declaration->last;
        }
    }
}

}  // namespace cu2cpp
