#include "rewriter.h"

#include <algorithm>
#include <cstddef>
#include <set>
#include <string>

namespace cu2cpp {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

struct Edit {
    std::size_t first;   // first token replaced
    std::size_t last;    // last token replaced (inclusive)
    std::string text;
};

class Rewriter {
public:
    Rewriter(const std::vector<Token>& tokens, const FileRewrite& how)
        : tokens_(tokens), how_(how), device_variables_(how.device_variables) {}

    std::string run() {
        const std::vector<bool> scope = namespace_scope(tokens_);
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            if (starts_launch(i)) i = rewrite_launch(i);
            else if (is_identifier(tokens_[i], "__shared__")) i = rewrite_shared(i);
            else if (is_identifier(tokens_[i], "__noinline__")) edits_.push_back({i, i, "__attribute__((noinline))"});
            else if (scope[i] && !tokens_[i].in_directive &&
                     (is_identifier(tokens_[i], "__device__") || is_identifier(tokens_[i], "__constant__")))
                i = rewrite_device_variable(i);
            else if (tokens_[i].kind == TokenKind::Identifier) rewrite_device_variable_use(i);
            else if (!tokens_[i].in_directive) follow_scopes(i);
        }
        rewrite_includes();
        return assemble();
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& message) const {
        throw RewriteError(how_.display_name, at < tokens_.size() ? tokens_[at].line : 0, message);
    }

    // Within a directive only the directive's own tokens count; outside, directives inside a
    // construct (an #ifdef between arguments) are passed through untouched.
    bool significant(std::size_t i, bool directive) const {
        return !is_blank(tokens_[i]) && tokens_[i].in_directive == directive;
    }
    bool leaves(std::size_t i, bool directive) const { return directive && !tokens_[i].in_directive; }

    std::size_t next(std::size_t i, bool directive) const {
        for (; i < tokens_.size(); ++i) {
            if (leaves(i, directive)) return kNone;
            if (significant(i, directive)) return i;
        }
        return kNone;
    }
    std::size_t previous(std::size_t i, bool directive) const {
        while (i-- > 0) {
            if (leaves(i, directive)) return kNone;
            if (significant(i, directive)) return i;
        }
        return kNone;
    }

    bool adjacent_puncts(std::size_t i, char c, std::size_t count) const {
        for (std::size_t k = 0; k < count; ++k)
            if (i + k >= tokens_.size() || !is_punct(tokens_[i + k], c)) return false;
        return true;
    }

    bool starts_launch(std::size_t i) const {
        if (!adjacent_puncts(i, '<', 3)) return false;
        if (i > 0 && is_punct(tokens_[i - 1], '<')) return false;
        // `operator<<<T>` names a specialisation of operator<<, not a launch.
        const std::size_t before = previous(i, tokens_[i].in_directive);
        return !(before != kNone && is_identifier(tokens_[before], "operator"));
    }

    // Walks back from `<<<` over `ns::name<args>`; returns the index of its first token.
    std::size_t kernel_name_start(std::size_t launch, bool directive) const {
        std::size_t at = previous(launch, directive);
        if (at == kNone || !(tokens_[at].kind == TokenKind::Identifier || is_punct(tokens_[at], '>')))
            fail(launch, "'<<<' must follow the name of the kernel to launch, as in kernel<<<blocks, threads>>>(...)");
        for (;;) {
            if (is_punct(tokens_[at], '>')) {
                int depth = 0;
                std::size_t k = at;
                for (; k != kNone; k = previous(k, directive)) {
                    if (is_punct(tokens_[k], '>')) ++depth;
                    else if (is_punct(tokens_[k], '<') && --depth == 0) break;
                }
                if (k == kNone) fail(launch, "the template arguments of the launched kernel have no opening '<'");
                at = previous(k, directive);
                if (at == kNone || tokens_[at].kind != TokenKind::Identifier)
                    fail(launch, "'<<<' must follow the name of the kernel to launch");
            }
            std::size_t start = at;
            std::size_t before = previous(at, directive);
            if (before != kNone && is_identifier(tokens_[before], "template")) {
                start = before;
                before = previous(before, directive);
            }
            if (before == kNone || tokens_[before].kind != TokenKind::Punct || tokens_[before].text != "::")
                return start;
            const std::size_t scope = previous(before, directive);
            if (scope == kNone || !(tokens_[scope].kind == TokenKind::Identifier || is_punct(tokens_[scope], '>')))
                return before;   // a leading ::
            at = scope;
        }
    }

    std::string text_of(std::size_t first, std::size_t last) const {   // inclusive, byte for byte
        std::string text;
        for (std::size_t i = first; i <= last && i < tokens_.size(); ++i) text += tokens_[i].text;
        return text;
    }

    // The name as written, with each run of spacing or comments shown as one space.
    std::string compact_text(std::size_t first, std::size_t last, bool directive) const {
        std::string text;
        bool gap = false;
        for (std::size_t i = first; i <= last; ++i) {
            if (!significant(i, directive)) {
                gap = !text.empty();
                continue;
            }
            if (gap) text += ' ';
            gap = false;
            text += tokens_[i].text;
        }
        return text;
    }

    std::string newlines_in(std::size_t first, std::size_t last) const {
        int count = 0;
        for (std::size_t i = first; i <= last && i < tokens_.size(); ++i) count += count_newlines(tokens_[i].text);
        return std::string(static_cast<std::size_t>(count), '\n');
    }

    // Index of the bracket that closes the one at `open`. A closing bracket of another kind, or a
    // ';' directly inside parentheses, means the source is not what it should be.
    std::size_t matching_close(std::size_t open, bool directive, const std::string& what) const {
        std::string expected;
        for (std::size_t i = open; i < tokens_.size(); ++i) {
            if (leaves(i, directive)) break;
            if (!significant(i, directive) || tokens_[i].kind != TokenKind::Punct) continue;
            const char c = tokens_[i].text[0];
            if (tokens_[i].text.size() != 1) continue;
            if (c == '(') expected.push_back(')');
            else if (c == '[') expected.push_back(']');
            else if (c == '{') expected.push_back('}');
            else if (c == ')' || c == ']' || c == '}') {
                if (expected.empty() || expected.back() != c) break;
                expected.pop_back();
                if (expected.empty()) return i;
            } else if (c == ';' && expected.back() != '}') {
                break;
            }
        }
        fail(open, what);
    }

    std::size_t rewrite_launch(std::size_t launch) {
        const bool directive = tokens_[launch].in_directive;
        const std::size_t name_first = kernel_name_start(launch, directive);
        const std::size_t name_last = previous(launch, directive);
        const std::string name = compact_text(name_first, name_last, directive);

        // The configuration ends at the first `>>>` outside brackets; in a longer run of `>`
        // (as in `foo<bar>>>>`) the last three close it.
        int depth = 0;
        std::size_t closer = kNone;
        for (std::size_t i = launch + 3; i < tokens_.size() && closer == kNone; ++i) {
            if (leaves(i, directive)) break;
            if (!significant(i, directive)) continue;
            const Token& token = tokens_[i];
            if (is_punct(token, '(') || is_punct(token, '[') || is_punct(token, '{')) ++depth;
            else if (is_punct(token, ')') || is_punct(token, ']') || is_punct(token, '}')) {
                if (--depth < 0) break;
            } else if (depth == 0 && is_punct(token, ';')) {
                break;
            } else if (depth == 0 && is_punct(token, '>')) {
                std::size_t run = 1;
                while (adjacent_puncts(i + run, '>', 1)) ++run;
                if (run >= 3) closer = i + run - 3;
                i += run - 1;
            }
        }
        if (closer == kNone)
            fail(launch, "'<<<' of the launch of '" + name + "' has no matching '>>>': write kernel<<<blocks, threads>>>(arguments)");
        if (next(launch + 3, directive) == closer)
            fail(launch, "the launch of '" + name + "' needs at least a grid and a block size between '<<<' and '>>>'");

        const std::size_t open = next(closer + 3, directive);
        if (open == kNone || !is_punct(tokens_[open], '('))
            fail(closer, "expected '(' with the kernel's arguments after '>>>' in the launch of '" + name + "'");
        const std::size_t close =
            matching_close(open, directive, "the arguments of the launch of '" + name + "' have no closing ')'");

        const std::string line = directive ? "__LINE__" : std::to_string(tokens_[name_first].line);
        const bool has_arguments = next(open + 1, directive) != close;
        const std::string arguments = close > open + 1 ? text_of(open + 1, close - 1) : "";
        const std::string config = text_of(launch + 3, closer - 1);
        const std::string before_config = newlines_in(name_first, name_last) + (name_last + 1 < launch ? text_of(name_last + 1, launch - 1) : "");
        const std::string before_arguments = open > closer + 3 ? text_of(closer + 3, open - 1) : "";
        const std::string site = "::mgpu::sim::Site{__FILE__, " + line + "}";

        std::string call;
        const bool plain_name = tokens_[name_last].kind == TokenKind::Identifier;
        const std::string last_name(tokens_[name_last].text);
        const bool deduced = plain_name && how_.kernel_templates.count(last_name) > 0;
        const bool defaulted = plain_name && how_.kernels_with_default_arguments.count(last_name) > 0;
        if (defaulted && !deduced) {
            call = "::mgpu::sim::launch_kernel_with_default_arguments(" + quoted_literal(name) + ", " + site +
                   ", &" + name + ", " + before_config + "::mgpu::sim::LaunchConfig(" +
                   config + "), [](auto&... mgpu_kernel_arguments) { " + name + "(mgpu_kernel_arguments...); }" +
                   before_arguments;
        } else if (deduced) {
            call = "::mgpu::sim::launch_deduced_kernel(" + quoted_literal(name) + ", " + site + ", " + before_config +
                   "::mgpu::sim::LaunchConfig(" + config + "), [](auto&... mgpu_kernel_arguments) { " + name +
                   "(mgpu_kernel_arguments...); }" + before_arguments;
        } else {
            call = "::mgpu::sim::KernelLauncher< " + name + " >::launch(" + quoted_literal(name) + ", " + site + ", " +
                   before_config + "::mgpu::sim::LaunchConfig(" + config + ")" + before_arguments;
        }
        call += (has_arguments ? ", " : "") + arguments + ")";
        edits_.push_back({name_first, close, call});
        return close;
    }

    // `__shared__` becomes `static`; `extern __shared__ T name[];` a pointer to the dynamic
    // shared memory of the running block.
    std::size_t rewrite_shared(std::size_t at) {
        const bool directive = tokens_[at].in_directive;
        std::size_t first = at;
        for (std::size_t i = previous(at, directive); i != kNone; i = previous(i, directive)) {
            if (is_punct(tokens_[i], ';') || is_punct(tokens_[i], '{') || is_punct(tokens_[i], '}')) break;
            if (directive && is_punct(tokens_[i], '#')) break;
            first = i;
        }
        std::size_t end = kNone;
        int depth = 0;
        for (std::size_t i = at; i < tokens_.size(); ++i) {
            if (leaves(i, directive)) break;
            if (!significant(i, directive)) continue;
            if (is_punct(tokens_[i], '(')) ++depth;
            if (is_punct(tokens_[i], ')')) --depth;
            if (depth == 0 && is_punct(tokens_[i], ';')) {
                end = i;
                break;
            }
        }
        bool is_extern = false, is_static = false;
        for (std::size_t i = first; i <= (end == kNone ? at : end); ++i) {
            if (!significant(i, directive)) continue;
            is_extern = is_extern || is_identifier(tokens_[i], "extern");
            is_static = is_static || is_identifier(tokens_[i], "static");
        }
        if (!is_extern) {
            edits_.push_back({at, at, is_static ? "" : "static"});
            return at;
        }
        if (end == kNone) fail(at, "this extern __shared__ declaration has no ';'");

        std::vector<std::size_t> rest;   // the declaration without extern, __shared__ and alignment
        for (std::size_t i = first; i < end; ++i) {
            if (!significant(i, directive)) continue;
            const Token& token = tokens_[i];
            if (is_identifier(token, "extern") || is_identifier(token, "__shared__")) continue;
            if (is_identifier(token, "__align__") || is_identifier(token, "alignas") ||
                is_identifier(token, "__attribute__")) {
                const std::size_t open = next(i + 1, directive);
                if (open != kNone && is_punct(tokens_[open], '('))
                    i = matching_close(open, directive, "unbalanced parentheses in an extern __shared__ declaration");
                continue;
            }
            rest.push_back(i);
        }
        const std::size_t n = rest.size();
        bool plain_type = n >= 4;   // the tokens before the name: a type, not more declarators
        int angle_depth = 0;
        for (std::size_t k = 0; plain_type && k + 3 < n; ++k) {
            const Token& token = tokens_[rest[k]];
            if (token.kind != TokenKind::Punct) continue;
            if (is_punct(token, '<')) ++angle_depth;
            if (is_punct(token, '>')) --angle_depth;
            if (token.text.find_first_of("[]=(){};") != std::string_view::npos ||
                (is_punct(token, ',') && angle_depth == 0))
                plain_type = false;
        }
        if (!plain_type || tokens_[rest[n - 3]].kind != TokenKind::Identifier || !is_punct(tokens_[rest[n - 2]], '[') ||
            !is_punct(tokens_[rest[n - 1]], ']'))
            fail(at, "cannot read this extern __shared__ declaration: write one unsized array per declaration, "
                     "as in `extern __shared__ float buffer[];`");
        std::string type;
        for (std::size_t k = 0; k + 3 < n; ++k) type.append(k ? " " : "").append(tokens_[rest[k]].text);
        const std::string name(tokens_[rest[n - 3]].text);
        edits_.push_back({first, end,
                          type + "* const " + name + " = reinterpret_cast<" + type +
                              "*>(::mgpu::sim::kernel::dynamic_shared_memory);" + newlines_in(first, end)});
        return end;
    }

    // `__device__ T name = init;` becomes the host variable holding the initial value and, on the
    // same line, the per-device variable that the uses of `name` are rewritten to reach.
    std::size_t rewrite_device_variable(std::size_t at) {
        const std::optional<DeviceVariableDeclaration> declaration = read_device_variable(tokens_, at);
        if (!declaration) return at;
        std::string image;
        std::size_t name = 0;
        for (std::size_t i = declaration->first; i <= declaration->last; ++i) {
            if (name < declaration->names.size() && declaration->names[name] == i) {
                image += "mgpu_initial_" + std::string(tokens_[i].text);
                ++name;
            } else {
                image += tokens_[i].text;
            }
        }
        const std::string storage = std::string(declaration->is_static ? "static " : "") +
                                    (declaration->is_extern ? "extern " : "") + (declaration->is_inline ? "inline " : "");
        for (std::size_t index : declaration->names) {
            const std::string variable(tokens_[index].text);
            image += " " + storage + "::mgpu::sim::DeviceSymbol<decltype(mgpu_initial_" + variable + "), " +
                     (declaration->constant ? "true" : "false") + "> mgpu_symbol_" + variable;
            if (declaration->defines)
                image += "{" + quoted_literal(variable) + ", &mgpu_initial_" + variable + ", ::mgpu::sim::Site{__FILE__, " +
                         std::to_string(tokens_[index].line) + "}}";
            image += ";";
            device_variables_.insert(variable);
        }
        edits_.push_back({declaration->first, declaration->last, image});
        return declaration->last;
    }

    // A use of a device variable: not a member of the same name (after `.` or `->`), nor a
    // parameter, local variable or member that declares the name anew, nor a use of one of those.
    void rewrite_device_variable_use(std::size_t at) {
        if (device_variables_.empty()) return;
        const std::string name(tokens_[at].text);
        if (device_variables_.count(name) == 0) return;
        const bool directive = tokens_[at].in_directive;
        const std::size_t before = previous(at, directive);
        if (before != kNone && (is_punct(tokens_[before], '.') ||
                                (is_punct(tokens_[before], '>') && before > 0 && is_punct(tokens_[before - 1], '-'))))
            return;
        if (!directive && before != kNone && declares_name(before)) {
            shadows_.push_back({name, braces_, parentheses_ > 0, false});
            return;
        }
        for (const Shadow& shadow : shadows_)
            if (shadow.name == name) return;
        edits_.push_back({at, at, "mgpu_symbol_" + name + ".get()"});
    }

    // Whether the token before a name makes the name a new declaration: a type name or a keyword
    // of one (`int counter`, `Params params`), or `*` or `&` after a built-in type (`float* x`; after
    // another name, `a * x` may as well be a product).
    bool declares_name(std::size_t before) const {
        static const std::set<std::string, std::less<>> expression_words = {
            "return", "case", "sizeof", "else", "do", "throw", "delete", "new", "co_return", "co_yield",
            "co_await", "typeid", "alignof", "decltype", "not", "and", "or", "goto"};
        static const std::set<std::string, std::less<>> builtin_types = {
            "bool", "char", "short", "int", "long", "unsigned", "signed", "float", "double", "void", "auto",
            "const", "volatile", "size_t", "__restrict__", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
            "uint16_t", "uint32_t", "uint64_t", "__half", "__nv_bfloat16", "float2", "float4", "int2", "int4"};
        const Token& token = tokens_[before];
        if (token.kind == TokenKind::Identifier) return expression_words.count(token.text) == 0;
        if (is_punct(token, '*') || is_punct(token, '&')) {
            const std::size_t type = previous(before, false);
            return type != kNone && tokens_[type].kind == TokenKind::Identifier && builtin_types.count(tokens_[type].text) > 0;
        }
        return false;
    }

    // Keeps the depth of braces and parentheses, and ends the declarations that shadow a device
    // variable when their scope ends: a local or member with its block, a parameter with the
    // function's body (or its prototype).
    void follow_scopes(std::size_t at) {
        const Token& token = tokens_[at];
        if (is_punct(token, '(')) ++parentheses_;
        else if (is_punct(token, ')')) --parentheses_;
        else if (is_punct(token, '{')) {
            ++braces_;
            for (Shadow& shadow : shadows_)
                if (shadow.parameter && braces_ == shadow.braces + 1) shadow.body_opened = true;
        } else if (is_punct(token, '}')) {
            --braces_;
            std::erase_if(shadows_, [&](const Shadow& shadow) {
                return braces_ < shadow.braces || (shadow.parameter && shadow.body_opened && braces_ == shadow.braces);
            });
        } else if (is_punct(token, ';') && parentheses_ == 0) {
            std::erase_if(shadows_, [&](const Shadow& shadow) {
                return shadow.parameter && !shadow.body_opened && braces_ == shadow.braces;
            });
        }
    }

    void rewrite_includes() {
        if (!how_.include_target) return;
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            if (!tokens_[i].in_directive || !is_punct(tokens_[i], '#')) continue;
            const std::size_t word = next(i + 1, true);
            if (word == kNone || !is_identifier(tokens_[word], "include")) continue;
            const std::size_t header = next(word + 1, true);
            if (header == kNone) continue;
            const Token& token = tokens_[header];
            const bool quoted = token.kind == TokenKind::String && token.text.front() == '"';
            if ((!quoted && token.kind != TokenKind::HeaderName) || token.text.size() < 2) continue;
            const IncludeDirective directive{std::string(token.text.substr(1, token.text.size() - 2)), !quoted, token.line};
            if (auto target = how_.include_target(directive)) edits_.push_back({header, header, quoted_literal(*target)});
        }
    }

    std::string assemble() {
        std::sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) { return a.first < b.first; });
        std::string out;
        if (how_.main_file) out += "#include <mgpu/sim/nvcc_predefined.h>\n#include <mgpu/sim/device_language.h>\n";
        out += "#line 1 " + quoted_literal(how_.display_name) + "\n";
        std::size_t edit = 0;
        for (std::size_t i = 0; i < tokens_.size(); ++i) {
            if (edit < edits_.size() && edits_[edit].first == i) {
                out += edits_[edit].text;
                i = edits_[edit].last;
                ++edit;
                continue;
            }
            out += tokens_[i].text;
        }
        return out;
    }

    const std::vector<Token>& tokens_;
    const FileRewrite& how_;
    std::set<std::string> device_variables_;   // declared so far, and in included headers
    struct Shadow {
        std::string name;
        int braces = 0;             // brace depth at the declaration
        bool parameter = false;     // declared inside parentheses (a parameter, a for-statement)
        bool body_opened = false;   // the function body or loop after it has begun
    };
    std::vector<Shadow> shadows_;   // declarations that hide a device variable's name, innermost last
    int braces_ = 0;
    int parentheses_ = 0;
    std::vector<Edit> edits_;
};

}  // namespace

std::string quoted_literal(std::string_view text) {
    std::string literal = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') literal += '\\';
        literal += c;
    }
    return literal + "\"";
}

std::string rewrite_source(std::string_view source, const FileRewrite& how) {
    if (source.substr(0, 3) == "\xEF\xBB\xBF") source.remove_prefix(3);   // a UTF-8 byte order mark
    const std::vector<Token> tokens = tokenize(source);
    return Rewriter(tokens, how).run();
}

}  // namespace cu2cpp
