// nvcc refuses a call of a __device__ function from host code; g++ compiling the rewritten file
// for the simulator would accept it, since there every function is host code. So cu2cpp finds
// such calls itself and reports them as nvcc does. It reads definitions at namespace scope: a
// function whose body starts there is host code unless __global__ or __device__ is among its
// specifiers (__host__ __device__ functions may call either). Inside host code, a lambda marked
// __device__ is skipped. A name also defined as a host function is left alone (an overload).
#include <cctype>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rewriter.h"

namespace cu2cpp {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// CUDA's own device-only functions a student may call by mistake from host code.
const std::set<std::string>& builtin_device_functions() {
    static const std::set<std::string> names = {
        "__syncthreads", "__syncwarp",    "__threadfence",   "__threadfence_block", "__shfl_sync",
        "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
        "__all_sync",    "__activemask",  "__ldg",           "atomicAdd",           "atomicSub",
        "atomicExch",    "atomicMin",     "atomicMax",       "atomicInc",           "atomicDec",
        "atomicCAS",     "atomicAnd",     "atomicOr",        "atomicXor",
    };
    return names;
}

bool code(const Token& token) { return !is_blank(token) && !token.in_directive; }

std::size_t next_code(const std::vector<Token>& tokens, std::size_t i) {
    for (; i < tokens.size(); ++i)
        if (code(tokens[i])) return i;
    return kNone;
}

std::size_t previous_code(const std::vector<Token>& tokens, std::size_t i) {
    while (i-- > 0)
        if (code(tokens[i])) return i;
    return kNone;
}

// The token that closes the bracket opened at tokens[open] ('(' or '{').
std::size_t closing(const std::vector<Token>& tokens, std::size_t open) {
    const char opener = tokens[open].text[0];
    const char closer = opener == '(' ? ')' : '}';
    int depth = 0;
    for (std::size_t i = open; i < tokens.size(); ++i) {
        if (!code(tokens[i])) continue;
        if (is_punct(tokens[i], opener)) ++depth;
        if (is_punct(tokens[i], closer) && --depth == 0) return i;
    }
    return kNone;
}

std::size_t opening(const std::vector<Token>& tokens, std::size_t close) {
    int depth = 0;
    for (std::size_t i = close + 1; i-- > 0;) {
        if (!code(tokens[i])) continue;
        if (is_punct(tokens[i], ')')) ++depth;
        if (is_punct(tokens[i], '(') && --depth == 0) return i;
    }
    return kNone;
}

enum class Side { Host, Device, Both };

// "name(float, const int *)": the parameter types of the list opened at `open`, without their
// names and default values, as nvcc names a function in its messages.
std::string signature(const std::vector<Token>& tokens, const std::string& name, std::size_t open) {
    const std::size_t close = closing(tokens, open);
    if (close == kNone) return name;
    std::vector<std::string> parameters;
    std::vector<std::string> words;
    int depth = 0;
    bool in_default = false;
    auto finish = [&] {
        // The last identifier of a parameter of two or more words is its name.
        if (words.size() > 1 && !words.back().empty() &&
            (std::isalpha(static_cast<unsigned char>(words.back()[0])) || words.back()[0] == '_') &&
            words.back() != "const" && words.back() != "volatile")
            words.pop_back();
        std::string text;
        for (const std::string& word : words) {
            const bool glue = word == "*" || word == "&" || word == "::" || word == "<" || word == ">" || word == ",";
            if (!text.empty() && !glue && text.back() != ':' && text.back() != '<') text += ' ';
            else if (!text.empty() && (word == "*" || word == "&") && text.back() != '*' && text.back() != '&') text += ' ';
            text += word;
        }
        if (!text.empty() && text != "void") parameters.push_back(text);
        words.clear();
        in_default = false;
    };
    for (std::size_t i = open + 1; i < close; ++i) {
        if (!code(tokens[i])) continue;
        const Token& token = tokens[i];
        if (is_punct(token, '(') || is_punct(token, '<') || is_punct(token, '[')) ++depth;
        if (is_punct(token, ')') || is_punct(token, '>') || is_punct(token, ']')) --depth;
        if (depth == 0 && is_punct(token, ',')) {
            finish();
            continue;
        }
        if (depth == 0 && is_punct(token, '=')) in_default = true;
        if (!in_default) words.emplace_back(token.text);
    }
    finish();
    std::string text = name + "(";
    for (std::size_t p = 0; p < parameters.size(); ++p) text += (p ? ", " : "") + parameters[p];
    return text + ")";
}

struct FunctionBody {
    std::string name;
    std::size_t parameters = 0;   // the '(' of its parameter list
    Side side = Side::Host;
    std::size_t open = 0, close = 0;   // its braces
};

// The specifiers of the declaration whose parameter list opens at `paren`: what stands between the
// end of the previous declaration and the name.
Side side_of_declaration(const std::vector<Token>& tokens, std::size_t paren) {
    bool host = false, device = false;
    for (std::size_t i = previous_code(tokens, paren); i != kNone; i = previous_code(tokens, i)) {
        if (is_punct(tokens[i], ';') || is_punct(tokens[i], '{') || is_punct(tokens[i], '}')) break;
        if (is_identifier(tokens[i], "__global__") || is_identifier(tokens[i], "__device__")) device = true;
        if (is_identifier(tokens[i], "__host__")) host = true;
    }
    if (device && host) return Side::Both;
    return device ? Side::Device : Side::Host;
}

// Function definitions whose bodies open at namespace scope.
std::vector<FunctionBody> function_bodies(const std::vector<Token>& tokens) {
    const std::vector<bool> scope = namespace_scope(tokens);
    std::vector<FunctionBody> bodies;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!code(tokens[i]) || !scope[i] || !is_punct(tokens[i], '{')) continue;
        std::size_t before = previous_code(tokens, i);
        // `) const {`, `) noexcept {`, `) override {`
        while (before != kNone && tokens[before].kind == TokenKind::Identifier &&
               (tokens[before].text == "const" || tokens[before].text == "noexcept" ||
                tokens[before].text == "override" || tokens[before].text == "final" || tokens[before].text == "mutable"))
            before = previous_code(tokens, before);
        if (before == kNone || !is_punct(tokens[before], ')')) continue;
        const std::size_t paren = opening(tokens, before);
        const std::size_t close = closing(tokens, i);
        if (paren == kNone || close == kNone) continue;
        const std::size_t name = previous_code(tokens, paren);
        FunctionBody body;
        body.name = name != kNone && tokens[name].kind == TokenKind::Identifier ? std::string(tokens[name].text) : "";
        body.side = side_of_declaration(tokens, paren);
        body.parameters = paren;
        body.open = i;
        body.close = close;
        bodies.push_back(body);
        i = close;
    }
    return bodies;
}

// `__device__ float f(float);` at namespace scope: the declared function's name and the '(' of its
// parameter list.
std::optional<std::pair<std::string, std::size_t>> device_prototype_at(const std::vector<Token>& tokens, std::size_t at) {
    for (std::size_t j = next_code(tokens, at + 1); j != kNone; j = next_code(tokens, j + 1)) {
        if (is_punct(tokens[j], ';') || is_punct(tokens[j], '{') || is_punct(tokens[j], '=') ||
            is_punct(tokens[j], '[') || is_identifier(tokens[j], "__host__"))
            return std::nullopt;
        if (is_punct(tokens[j], '(')) {
            const std::size_t name = previous_code(tokens, j);
            if (name == kNone || tokens[name].kind != TokenKind::Identifier) return std::nullopt;
            if (side_of_declaration(tokens, j) != Side::Device) return std::nullopt;
            return std::make_pair(std::string(tokens[name].text), j);
        }
    }
    return std::nullopt;
}

}  // namespace

void collect_function_sides(const std::vector<Token>& tokens, FunctionSides& sides) {
    for (const FunctionBody& body : function_bodies(tokens)) {
        if (body.name.empty()) continue;
        (body.side == Side::Device ? sides.device_only : sides.host_callable).insert(body.name);
        if (body.side == Side::Device) sides.signatures.try_emplace(body.name, signature(tokens, body.name, body.parameters));
    }
    const std::vector<bool> scope = namespace_scope(tokens);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!code(tokens[i]) || !scope[i] || !is_identifier(tokens[i], "__device__")) continue;
        if (auto prototype = device_prototype_at(tokens, i)) {
            sides.device_only.insert(prototype->first);
            sides.signatures.try_emplace(prototype->first, signature(tokens, prototype->first, prototype->second));
        }
    }
}

void check_host_calls(const std::vector<Token>& tokens, const FunctionSides& sides, const std::string& display_name) {
    auto device_only = [&](std::string_view name) {
        const std::string text(name);
        if (sides.host_callable.contains(text)) return false;
        return sides.device_only.contains(text) || builtin_device_functions().contains(text);
    };
    for (const FunctionBody& body : function_bodies(tokens)) {
        if (body.side != Side::Host) continue;
        for (std::size_t i = body.open + 1; i < body.close; ++i) {
            if (!code(tokens[i])) continue;
            // A lambda marked __device__ (an extended lambda) is device code: skip its body.
            if (is_identifier(tokens[i], "__device__")) {
                std::size_t brace = i;
                while (brace < body.close && !(code(tokens[brace]) && is_punct(tokens[brace], '{'))) ++brace;
                const std::size_t end = brace < body.close ? closing(tokens, brace) : kNone;
                if (end == kNone) break;
                i = end;
                continue;
            }
            if (tokens[i].kind != TokenKind::Identifier || !device_only(tokens[i].text)) continue;
            const std::size_t after = next_code(tokens, i + 1);
            if (after == kNone || !is_punct(tokens[after], '(')) continue;
            const std::size_t before = previous_code(tokens, i);
            if (before != kNone && (is_punct(tokens[before], '.') ||
                                    (tokens[before].kind == TokenKind::Punct && tokens[before].text == "::" &&
                                     previous_code(tokens, before) != kNone &&
                                     tokens[previous_code(tokens, before)].kind == TokenKind::Identifier)))
                continue;   // a member, or a name in another namespace
            if (before != kNone && is_punct(tokens[before], '>')) {
                const std::size_t arrow = previous_code(tokens, before);
                if (arrow != kNone && is_punct(tokens[arrow], '-')) continue;   // p->name(
            }
            const std::string callee(tokens[i].text);
            const auto known = sides.signatures.find(callee);
            throw RewriteError(display_name, tokens[i].line,
                               "calling a __device__ function(\"" +
                                   (known != sides.signatures.end() ? known->second : callee) +
                                   "\") from a __host__ function(\"" + (body.name.empty() ? "lambda" : body.name) +
                                   "\") is not allowed");
        }
    }
}

}  // namespace cu2cpp
