#include "source_tokens.h"

#include <algorithm>
#include <string>

namespace cu2cpp {
namespace {

bool identifier_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
}

bool identifier_char(char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }

bool digit(char c) { return c >= '0' && c <= '9'; }

bool string_prefix(std::string_view word) {
    return word == "u8" || word == "u" || word == "U" || word == "L" || word == "R" || word == "u8R" ||
           word == "uR" || word == "UR" || word == "LR";
}

class Tokenizer {
public:
    explicit Tokenizer(std::string_view source) : src_(source) {}

    std::vector<Token> run() {
        while (pos_ < src_.size()) next();
        return std::move(tokens_);
    }

private:
    char at(std::size_t offset = 0) const { return pos_ + offset < src_.size() ? src_[pos_ + offset] : '\0'; }

    std::size_t line_break_length(std::size_t at_pos) const {
        if (at_pos < src_.size() && src_[at_pos] == '\n') return 1;
        if (at_pos + 1 < src_.size() && src_[at_pos] == '\r' && src_[at_pos + 1] == '\n') return 2;
        return 0;
    }

    void emit(TokenKind kind, std::size_t begin) {
        Token token{kind, src_.substr(begin, pos_ - begin), line_, directive_};
        tokens_.push_back(token);
        line_ += count_newlines(token.text);
        if (!is_blank(token)) {
            at_line_start_ = false;
            if (!(kind == TokenKind::Identifier && header_name_next_)) header_name_next_ = false;
        }
    }

    void next() {
        const std::size_t begin = pos_;
        const char c = at();
        if (std::size_t length = line_break_length(pos_)) {
            pos_ += length;
            directive_ = false;
            header_name_next_ = false;
            emit(TokenKind::Newline, begin);
            at_line_start_ = true;
            return;
        }
        if (c == '\\') {
            if (std::size_t length = line_break_length(pos_ + 1)) {
                pos_ += 1 + length;
                emit(TokenKind::Splice, begin);
                return;
            }
        }
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || (c == '\r' && !line_break_length(pos_))) {
            while (pos_ < src_.size() && (at() == ' ' || at() == '\t' || at() == '\f' || at() == '\v' ||
                                          (at() == '\r' && !line_break_length(pos_))))
                ++pos_;
            emit(TokenKind::Space, begin);
            return;
        }
        if (c == '/' && at(1) == '/') {
            line_comment();
            emit(TokenKind::Comment, begin);
            return;
        }
        if (c == '/' && at(1) == '*') {
            const std::size_t end = src_.find("*/", pos_ + 2);
            pos_ = end == std::string_view::npos ? src_.size() : end + 2;
            emit(TokenKind::Comment, begin);
            return;
        }
        if (c == '#' && at_line_start_ && !directive_) {
            directive_ = true;
            ++pos_;
            emit(TokenKind::Punct, begin);
            header_name_next_ = false;
            directive_words_ = 0;
            return;
        }
        if (identifier_start(c)) {
            while (pos_ < src_.size() && identifier_char(at())) ++pos_;
            const std::string_view word = src_.substr(begin, pos_ - begin);
            if (string_prefix(word) && (at() == '"' || (at() == '\'' && word.back() != 'R'))) {
                const bool character = at() == '\'';
                if (!character && word.back() == 'R') raw_string();
                else quoted(at());
                emit(character ? TokenKind::Char : TokenKind::String, begin);
                return;
            }
            const bool include_word = directive_ && directive_words_ == 0 &&
                                      (word == "include" || word == "include_next" || word == "import");
            if (directive_) ++directive_words_;
            header_name_next_ = include_word;
            emit(TokenKind::Identifier, begin);
            return;
        }
        if (digit(c) || (c == '.' && digit(at(1)))) {
            number();
            emit(TokenKind::Number, begin);
            return;
        }
        if (c == '"' || c == '\'') {
            quoted(c);
            emit(c == '"' ? TokenKind::String : TokenKind::Char, begin);
            return;
        }
        if (c == '<' && header_name_next_) {
            while (pos_ < src_.size() && at() != '>' && !line_break_length(pos_)) ++pos_;
            if (at() == '>') ++pos_;
            emit(TokenKind::HeaderName, begin);
            return;
        }
        if (c == ':' && at(1) == ':') {
            pos_ += 2;
            emit(TokenKind::Punct, begin);
            return;
        }
        ++pos_;
        emit(TokenKind::Punct, begin);
    }

    // Up to the line break that ends it; a backslash before a line break continues the comment.
    void line_comment() {
        while (pos_ < src_.size()) {
            if (line_break_length(pos_)) {
                std::size_t back = pos_;
                if (back > 0 && src_[back - 1] == '\\') {
                    pos_ += line_break_length(pos_);
                    continue;
                }
                return;
            }
            ++pos_;
        }
    }

    // A "..." or '...' literal; an unterminated one ends at the line break (the compiler reports it).
    void quoted(char quote) {
        ++pos_;
        while (pos_ < src_.size()) {
            const char c = at();
            if (c == '\\') {
                pos_ += 1 + std::max<std::size_t>(1, line_break_length(pos_ + 1));
                continue;
            }
            if (c == quote) {
                ++pos_;
                return;
            }
            if (line_break_length(pos_)) return;
            ++pos_;
        }
    }

    // R"delimiter( ... )delimiter"
    void raw_string() {
        const std::size_t open = src_.find('(', pos_ + 1);
        if (open == std::string_view::npos) {
            quoted('"');
            return;
        }
        std::string closing = ")";
        closing.append(src_.substr(pos_ + 1, open - pos_ - 1)).append("\"");
        const std::size_t end = src_.find(closing, open + 1);
        pos_ = end == std::string_view::npos ? src_.size() : end + closing.size();
    }

    void number() {
        ++pos_;
        while (pos_ < src_.size()) {
            const char c = at();
            const char previous = src_[pos_ - 1];
            if (identifier_char(c) || c == '.') ++pos_;
            else if (c == '\'' && identifier_char(at(1))) pos_ += 2;
            else if ((c == '+' || c == '-') &&
                     (previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P'))
                ++pos_;
            else break;
        }
    }

    std::string_view src_;
    std::size_t pos_ = 0;
    int line_ = 1;
    bool at_line_start_ = true;
    bool directive_ = false;
    bool header_name_next_ = false;
    int directive_words_ = 0;
    std::vector<Token> tokens_;
};

}  // namespace

int count_newlines(std::string_view text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

std::vector<Token> tokenize(std::string_view source) { return Tokenizer(source).run(); }

}  // namespace cu2cpp
