#include "message_colours.h"

#include <regex>
#include <sstream>

namespace mgpu::messages {

std::string with_colours(const std::string& messages) {
    static const std::regex diagnostic(R"(^(.*?: )(error|fatal error|warning|note)(: )(.*)$)");
    static const std::regex caret(R"(^( *[0-9]* \| )(.*[~^].*)$)");
    const std::string bold = "\x1b[01m", reset = "\x1b[m";
    std::istringstream in(messages);
    std::string out;
    for (std::string line; std::getline(in, line);) {
        std::smatch match;
        if (std::regex_match(line, match, diagnostic)) {
            const std::string kind = match[2].str();
            const char* colour = kind == "note" ? "\x1b[01;36m" : kind == "warning" ? "\x1b[01;35m" : "\x1b[01;31m";
            out += bold + match[1].str() + reset + colour + kind + match[3].str() + reset + match[4].str() + "\n";
        } else if (std::regex_match(line, match, caret) && match[1].str().find_first_of("0123456789") == std::string::npos) {
            out += match[1].str() + "\x1b[32m" + match[2].str() + reset + "\n";
        } else {
            out += line + "\n";
        }
    }
    return out;
}

}  // namespace mgpu::messages
