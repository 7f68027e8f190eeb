#include "api_signatures.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

namespace mgpu::messages {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& text) {
    const auto first = text.find_first_not_of(" \t\n");
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The declarations of a header as single lines: comments and preprocessor lines dropped,
// statements joined and split at ';'.
std::vector<std::string> statements(const std::string& text) {
    std::istringstream lines(text);
    std::string line, joined;
    while (std::getline(lines, line)) {
        const auto comment = line.find("//");
        if (comment != std::string::npos) line.erase(comment);
        if (trim(line).starts_with("#")) continue;
        joined += line + " ";
    }
    std::vector<std::string> result;
    std::size_t start = 0;
    for (std::size_t end; (end = joined.find(';', start)) != std::string::npos; start = end + 1)
        result.push_back(trim(joined.substr(start, end - start)));
    return result;
}

// One parameter as g++ prints its type: `enum cudaMemcpyKind kind = x` -> `cudaMemcpyKind`.
std::string parameter_type(std::string parameter) {
    const auto equals = parameter.find('=');
    if (equals != std::string::npos) parameter.erase(equals);
    parameter = trim(parameter);
    for (const char* tag : {"enum ", "struct "}) {
        for (std::size_t at; (at = parameter.find(tag)) != std::string::npos;) parameter.erase(at, std::string(tag).size());
    }
    // The parameter's name is the last word, when something precedes it that is not a type word.
    std::size_t name_start = parameter.size();
    while (name_start > 0 && is_word_char(parameter[name_start - 1])) --name_start;
    const std::string before = trim(parameter.substr(0, name_start));
    const std::string name = parameter.substr(name_start);
    static const std::vector<std::string> type_words = {"int", "char", "long", "short", "unsigned", "signed", "const", "float", "double", "void"};
    const bool before_is_only_modifiers = before.empty() || before == "unsigned" || before == "signed" || before == "const";
    bool name_is_type_word = false;
    for (const auto& word : type_words) name_is_type_word = name_is_type_word || name == word;
    if (!before_is_only_modifiers && !name_is_type_word) parameter = before;
    // g++ writes `int*`, `const char*`: no space before a star.
    std::string compact;
    for (char c : parameter) {
        if (c == '*' && !compact.empty() && compact.back() == ' ') compact.pop_back();
        if (c == ' ' && !compact.empty() && compact.back() == ' ') continue;
        compact += c;
    }
    return trim(compact);
}

std::string signature_of(const std::string& returned, const std::string& name, const std::string& list) {
    std::vector<std::string> types;
    std::size_t start = 0;
    for (std::size_t comma; start <= list.size(); start = comma + 1) {
        comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        std::string type = parameter_type(list.substr(start, comma - start));
        if (!type.empty()) types.push_back(type);
    }
    std::string signature = parameter_type(returned + " x") + " " + name + "(";
    for (std::size_t i = 0; i < types.size(); ++i) signature += (i ? ", " : "") + types[i];
    return signature + ")";
}

// The device functions (__syncthreads, ...) take the call site as a defaulted std::source_location
// and are defined inline, one declaration a line, in the simulator's device_*.h headers.
void add_device_functions(const fs::path& folder, std::map<std::string, std::string>& result) {
    static const std::regex declaration(
        R"(^(?:\[\[[^\]]*\]\]\s*)?(?:inline\s+)?(.+?)\s+(\w+)\((.*?),?\s*std::source_location \w+ = std::source_location::current\(\)\).*$)");
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
        if (!entry.path().filename().string().starts_with("device_")) continue;
        std::ifstream in(entry.path());
        for (std::string line; std::getline(in, line);) {
            std::smatch match;
            if (std::regex_match(line, match, declaration) && !result.count(match[2].str()))
                result[match[2].str()] = signature_of(match[1].str(), match[2].str(), match[3].str());
        }
    }
}

}  // namespace

std::map<std::string, std::string> api_signatures(const fs::path& folder) {
    std::map<std::string, std::string> result;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".h") continue;
        std::ifstream in(entry.path());
        std::ostringstream text;
        text << in.rdbuf();
        for (const auto& statement : statements(text.str())) {
            const auto site = statement.find("MGPU_SITE");
            const auto open = statement.find('(');
            if (site == std::string::npos || open == std::string::npos || statement.find('{') != std::string::npos ||
                statement.starts_with("template"))
                continue;
            std::size_t name_start = open;
            while (name_start > 0 && statement[name_start - 1] == ' ') --name_start;
            std::size_t name_end = name_start;
            while (name_start > 0 && is_word_char(statement[name_start - 1])) --name_start;
            const std::string name = statement.substr(name_start, name_end - name_start);
            if (name.empty() || name.starts_with("mgpu_") || result.count(name)) continue;
            // Parameters: between '(' and the call-site parameter.
            result[name] = signature_of(statement.substr(0, name_start), name, statement.substr(open + 1, site - open - 1));
        }
    }
    add_device_functions(folder / "mgpu" / "sim", result);
    return result;
}

}  // namespace mgpu::messages
