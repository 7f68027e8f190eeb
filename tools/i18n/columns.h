// Text laid out in columns on a terminal. printf's widths and string sizes count bytes, but a
// Japanese character is three bytes in UTF-8 and two columns on a terminal, so translated tables
// and wrapped paragraphs measure by columns instead.
#pragma once

#include <cstddef>
#include <string>

namespace mgpu {

namespace detail {

// The UTF-8 character at `text[at]`: its length in bytes and the columns it takes.
struct CharacterSize {
    std::size_t bytes;
    std::size_t columns;
};

inline CharacterSize character_at(const std::string& text, std::size_t at) {
    const unsigned char lead = static_cast<unsigned char>(text[at]);
    const std::size_t bytes = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    char32_t code = bytes == 1 ? lead : lead & (0x7f >> bytes);
    for (std::size_t k = 1; k < bytes && at + k < text.size(); ++k) code = (code << 6) | (text[at + k] & 0x3f);
    // The wide ranges: CJK and its punctuation, kana, Hangul, full-width forms.
    const bool wide = (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) ||
                      (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) ||
                      (code >= 0xff00 && code <= 0xff60) || (code >= 0xffe0 && code <= 0xffe6);
    return {bytes, wide ? std::size_t(2) : std::size_t(1)};
}

}  // namespace detail

// The columns `text` takes on a terminal.
inline std::size_t columns_of(const std::string& text) {
    std::size_t columns = 0;
    for (std::size_t i = 0; i < text.size();) {
        const detail::CharacterSize size = detail::character_at(text, i);
        columns += size.columns;
        i += size.bytes;
    }
    return columns;
}

// `text` padded with spaces to `columns`; `cut` shortens what does not fit (a lesson's title).
inline std::string pad_to_columns(const std::string& text, std::size_t columns, bool cut = false) {
    std::string out;
    std::size_t used = 0;
    for (std::size_t i = 0; i < text.size();) {
        const detail::CharacterSize size = detail::character_at(text, i);
        if (cut && used + size.columns > columns) break;
        out.append(text, i, size.bytes);
        used += size.columns;
        i += size.bytes;
    }
    return used >= columns ? out : out + std::string(columns - used, ' ');
}

}  // namespace mgpu
