// A text written twice: in English for a report file, which is a record kept as it was written
// (validate's --out FILE.md, committed under bench/results/), and in the user's language for the
// terminal. say(N_("{} of {} sizes agree"), 3, 4) fills a catalog message both ways; text that
// reads the same in both (names, numbers, commands, a program's output) converts to Words as it is.
#pragma once

#include <string>
#include <utility>

#include "translate.h"

namespace mgpu::cli {

struct Words {
    std::string english;  // for the file
    std::string shown;    // for the terminal

    Words() = default;
    Words(std::string same) : english(same), shown(std::move(same)) {}
    Words(const char* same) : Words(std::string(same)) {}
    Words(std::string english_text, std::string shown_text)
        : english(std::move(english_text)), shown(std::move(shown_text)) {}

    bool empty() const { return english.empty(); }
};

inline Words operator+(const Words& a, const Words& b) { return {a.english + b.english, a.shown + b.shown}; }
inline Words& operator+=(Words& a, const Words& b) { return a = a + b; }

namespace detail {
// A value filled into say()'s message: Words give their own form for each side, anything else
// reads the same in both.
template <typename Value>
const Value& english_of(const Value& value) { return value; }
inline const std::string& english_of(const Words& words) { return words.english; }
template <typename Value>
const Value& shown_of(const Value& value) { return value; }
inline const std::string& shown_of(const Words& words) { return words.shown; }
}  // namespace detail

// The catalog message `english` (marked with N_ so that the catalog finds it) with its values, in
// English and in the user's language; "{}" and "{0}" as for fill().
template <typename... Values>
Words say(const char* english, const Values&... values) {
    return {fill(english, detail::english_of(values)...), fill(tr(english), detail::shown_of(values)...)};
}

}  // namespace mgpu::cli
