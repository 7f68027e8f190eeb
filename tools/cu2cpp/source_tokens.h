// Splits CUDA C++ source into tokens that keep their exact text, so that the rewriter can find
// launches and declarations and still give back every other byte unchanged. Comments, string
// and character literals (raw strings included) are single tokens, so a `<<<` inside them is
// never mistaken for a launch; tokens of preprocessor directives are marked as such.
#pragma once

#include <string_view>
#include <vector>

namespace cu2cpp {

enum class TokenKind {
    Space,        // spaces and tabs
    Newline,      // one line break
    Splice,       // a backslash followed by a line break
    Comment,      // // or /* */ (a block comment may span lines)
    Identifier,   // also keywords
    Number,       // a preprocessing number: 42, 0x1f, 1'000, 1.5e-3f
    String,       // "..." with any prefix, raw strings included
    Char,         // '...' with any prefix
    HeaderName,   // <...> after #include
    Punct,        // one character of punctuation, or `::`
};

struct Token {
    TokenKind kind;
    std::string_view text;
    int line;                   // 1-based line where the token starts
    bool in_directive = false;  // part of a preprocessor directive (its terminating newline is not)
};

std::vector<Token> tokenize(std::string_view source);

// Spacing and comments: what a parser skips.
inline bool is_blank(const Token& token) {
    return token.kind == TokenKind::Space || token.kind == TokenKind::Newline || token.kind == TokenKind::Splice ||
           token.kind == TokenKind::Comment;
}

inline bool is_punct(const Token& token, char c) {
    return token.kind == TokenKind::Punct && token.text.size() == 1 && token.text[0] == c;
}

inline bool is_identifier(const Token& token, std::string_view name) {
    return token.kind == TokenKind::Identifier && token.text == name;
}

int count_newlines(std::string_view text);

}  // namespace cu2cpp
