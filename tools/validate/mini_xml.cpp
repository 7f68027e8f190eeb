#include "mini_xml.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>

namespace mgpu::validate {

namespace {

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    XmlDocument read() {
        XmlDocument document;
        read_content(document.root, /*closing_name=*/nullptr);
        document.complete = problem_.empty();
        document.problem = problem_;
        return document;
    }

private:
    bool at_end() const { return position_ >= text_.size(); }
    bool starts_with(std::string_view prefix) const { return text_.substr(position_, prefix.size()) == prefix; }

    void note(const std::string& problem) {
        if (problem_.empty()) problem_ = problem;
    }

    // Skips past `terminator`; false (and at the end) when it never comes.
    bool skip_past(std::string_view terminator) {
        const std::size_t found = text_.find(terminator, position_);
        if (found == std::string_view::npos) {
            position_ = text_.size();
            return false;
        }
        position_ = found + terminator.size();
        return true;
    }

    void skip_spaces() {
        while (!at_end() && std::isspace(static_cast<unsigned char>(text_[position_]))) ++position_;
    }

    std::string read_name() {
        const std::size_t start = position_;
        while (!at_end()) {
            const char c = text_[position_];
            if (std::isspace(static_cast<unsigned char>(c)) || c == '>' || c == '/' || c == '=') break;
            ++position_;
        }
        return std::string(text_.substr(start, position_ - start));
    }

    // Reads children and text into `element` until its closing tag (or the end of the text).
    void read_content(XmlElement& element, const std::string* closing_name) {
        while (!at_end()) {
            const std::size_t next_markup = text_.find('<', position_);
            const std::size_t text_end = next_markup == std::string_view::npos ? text_.size() : next_markup;
            element.text += decode_entities(text_.substr(position_, text_end - position_));
            position_ = text_end;
            if (at_end()) break;
            if (starts_with("<!--")) {
                if (!skip_past("-->")) note("a comment is cut short");
            } else if (starts_with("<![CDATA[")) {
                position_ += 9;
                const std::size_t end = text_.find("]]>", position_);
                if (end == std::string_view::npos) {
                    element.text += std::string(text_.substr(position_));
                    position_ = text_.size();
                    note("a CDATA section is cut short");
                } else {
                    element.text += std::string(text_.substr(position_, end - position_));
                    position_ = end + 3;
                }
            } else if (starts_with("<?") || starts_with("<!")) {
                if (!skip_past(">")) note("a declaration is cut short");
            } else if (starts_with("</")) {
                position_ += 2;
                const std::string name = read_name();
                if (!skip_past(">")) note("a closing tag is cut short");
                if (closing_name == nullptr || name != *closing_name)
                    note("</" + name + "> closes an element that is not open");
                return;
            } else {
                read_element(element);
            }
        }
        if (closing_name != nullptr) note("<" + *closing_name + "> is never closed: the text ends early");
    }

    void read_element(XmlElement& parent) {
        ++position_;   // '<'
        XmlElement element;
        element.name = read_name();
        while (true) {
            skip_spaces();
            if (at_end()) {
                note("the tag <" + element.name + " is cut short");
                parent.children.push_back(std::move(element));
                return;
            }
            if (starts_with("/>")) {
                position_ += 2;
                parent.children.push_back(std::move(element));
                return;
            }
            if (text_[position_] == '>') {
                ++position_;
                break;
            }
            std::string key = read_name();
            if (key.empty()) {   // stray character: step over it rather than loop forever
                ++position_;
                continue;
            }
            skip_spaces();
            std::string value;
            if (!at_end() && text_[position_] == '=') {
                ++position_;
                skip_spaces();
                if (!at_end() && (text_[position_] == '"' || text_[position_] == '\'')) {
                    const char quote = text_[position_++];
                    const std::size_t end = text_.find(quote, position_);
                    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
                    value = decode_entities(text_.substr(position_, stop - position_));
                    position_ = end == std::string_view::npos ? text_.size() : end + 1;
                } else {
                    value = read_name();
                }
            }
            element.attributes.emplace_back(std::move(key), std::move(value));
        }
        read_content(element, &element.name);
        parent.children.push_back(std::move(element));
    }

    std::string_view text_;
    std::size_t position_ = 0;
    std::string problem_;
};

}  // namespace

std::optional<std::string> XmlElement::attribute(std::string_view key) const {
    for (const auto& [name, value] : attributes)
        if (name == key) return value;
    return std::nullopt;
}

std::string XmlElement::attribute_or(std::string_view key, const std::string& fallback) const {
    auto value = attribute(key);
    return value ? *value : fallback;
}

const XmlElement* XmlElement::first_child(std::string_view child_name) const {
    for (const auto& child : children)
        if (child.name == child_name) return &child;
    return nullptr;
}

XmlDocument read_xml(std::string_view text) { return Reader(text).read(); }

std::string decode_entities(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        if (text[i] != '&') {
            out += text[i++];
            continue;
        }
        const std::size_t end = text.find(';', i);
        if (end == std::string_view::npos || end - i > 12) {
            out += text[i++];
            continue;
        }
        const std::string_view entity = text.substr(i + 1, end - i - 1);
        bool known = true;
        if (entity == "lt") out += '<';
        else if (entity == "gt") out += '>';
        else if (entity == "amp") out += '&';
        else if (entity == "quot") out += '"';
        else if (entity == "apos") out += '\'';
        else if (entity.size() >= 2 && entity[0] == '#') {
            const bool hex = entity[1] == 'x' || entity[1] == 'X';
            const std::string digits(entity.substr(hex ? 2 : 1));
            char* digits_end = nullptr;
            const unsigned long code = std::strtoul(digits.c_str(), &digits_end, hex ? 16 : 10);
            known = !digits.empty() && digits_end != nullptr && *digits_end == '\0' && code <= 0x10FFFF;
            if (known) append_utf8(out, static_cast<std::uint32_t>(code));
        } else {
            known = false;
        }
        if (known) {
            i = end + 1;
        } else {
            out += text[i++];
        }
    }
    return out;
}

}  // namespace mgpu::validate
