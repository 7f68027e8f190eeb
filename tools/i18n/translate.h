// The kit's own words in the student's language. tr("English text") looks the text up in the
// gettext catalog of the "mgpu" domain (po/ja.po, compiled by the build) and gives the English
// back where the catalog has no translation or none was chosen (tools/cli/language.cpp chooses).
// The English text is the key, so the sources stay readable and a missing translation is never
// worse than English. N_() marks a text that is stored before the language is known (command
// declarations, tables) and translated where it is shown; tools/i18n/extract-messages finds both.
#pragma once

#include <libintl.h>

#include <cstddef>
#include <sstream>
#include <string>

namespace mgpu {

inline constexpr const char* kTextDomain = "mgpu";

// gettext("") answers the catalog's header, so an empty text is given back as it is.
inline const char* tr(const char* english) {
    return english[0] == '\0' ? english : ::dgettext(kTextDomain, english);
}

inline std::string tr(const std::string& english) {
    return english.empty() ? english : std::string(::dgettext(kTextDomain, english.c_str()));
}

// Marks a text for the catalog without translating it here.
constexpr const char* N_(const char* english) { return english; }

namespace detail {
template <typename Value>
std::string as_text(const Value& value) {
    std::ostringstream out;
    out << value;
    return out.str();
}
}  // namespace detail

// A translated message with values in it: each "{}" of `text` takes the next value in turn, and
// "{0}", "{1}", ... a value by its place, so that a translation may put the values in the order its
// language wants ("write TODO({}) in {}" -> "{1} の TODO({0}) を書く").
template <typename... Values>
std::string fill(const std::string& text, const Values&... values) {
    const std::string parts[] = {std::string(), detail::as_text(values)...};
    constexpr std::size_t count = sizeof...(Values);
    std::string out;
    std::size_t next = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const std::size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
        const std::string inside = close == std::string::npos ? std::string("x") : text.substr(i + 1, close - i - 1);
        if (inside.empty() || (inside.size() == 1 && inside[0] >= '0' && inside[0] <= '9')) {
            const std::size_t index = inside.empty() ? next++ : static_cast<std::size_t>(inside[0] - '0');
            if (index < count) out += parts[index + 1];
            i = close;
            continue;
        }
        out += text[i];
    }
    return out;
}

// A message about a count, in the form English needs for it ("1 test case failed", "2 test cases
// failed"). Both forms are in the catalog and each is translated as the language wants (Japanese
// has one form, so the two read alike); `one` and `many` are marked with N_() where they are written.
template <typename... Values>
std::string fill_count(std::size_t count, const char* one, const char* many, const Values&... more) {
    return fill(tr(count == 1 ? one : many), count, more...);
}

}  // namespace mgpu
