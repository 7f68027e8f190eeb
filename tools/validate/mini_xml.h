// A small XML reader for the reports doctest writes (--reporters=xml): elements, attributes,
// text and the five named entities plus numeric ones. A report cut short (the program crashed or
// was stopped) still reads: what was there is kept and `complete` says it ended early.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mgpu::validate {

struct XmlElement {
    std::string name;
    std::vector<std::pair<std::string, std::string>> attributes;
    std::string text;                  // the element's own text, entities decoded, children's left out
    std::vector<XmlElement> children;

    std::optional<std::string> attribute(std::string_view key) const;
    std::string attribute_or(std::string_view key, const std::string& fallback) const;
    const XmlElement* first_child(std::string_view child_name) const;
};

struct XmlDocument {
    XmlElement root;           // a nameless element holding the top-level elements
    bool complete = false;     // every element that was opened was closed, and no markup was cut
    std::string problem;       // what was wrong, in words, when not complete
};

XmlDocument read_xml(std::string_view text);

// "&lt;" -> "<" and so on; an unknown entity is kept as written.
std::string decode_entities(std::string_view text);

}  // namespace mgpu::validate
