// Text laid out in table columns on a terminal. printf's widths count bytes, but a Japanese
// character is three bytes in UTF-8 and two columns on a terminal, so translated tables pad by
// columns instead.
#pragma once

#include <string>

namespace mgpu {

// `text` padded with spaces to `columns`; `cut` shortens what does not fit (a lesson's title).
inline std::string pad_to_columns(const std::string& text, std::size_t columns, bool cut = false) {
    std::string out;
    std::size_t used = 0;
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char lead = static_cast<unsigned char>(text[i]);
        const std::size_t length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
        char32_t code = length == 1 ? lead : lead & (0x7f >> length);
        for (std::size_t k = 1; k < length && i + k < text.size(); ++k) code = (code << 6) | (text[i + k] & 0x3f);
        // The wide ranges: CJK, kana, Hangul, full-width forms.
        const bool wide = (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) ||
                          (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) ||
                          (code >= 0xff00 && code <= 0xff60) || (code >= 0xffe0 && code <= 0xffe6);
        const std::size_t width = wide ? 2 : 1;
        if (cut && used + width > columns) break;
        out.append(text, i, length);
        used += width;
        i += length;
    }
    return used >= columns ? out : out + std::string(columns - used, ' ');
}

}  // namespace mgpu
