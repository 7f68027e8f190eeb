#include "language.h"

#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <libintl.h>

#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

std::optional<std::string> take_language_option(std::vector<std::string>& args) {
    std::optional<std::string> value;
    for (std::size_t i = 0; i < args.size();) {
        if (args[i] == "--") break;
        if (args[i].rfind("--lang=", 0) == 0) {
            value = args[i].substr(7);
            args.erase(args.begin() + static_cast<long>(i));
        } else if (args[i] == "--lang") {
            if (i + 1 >= args.size() || args[i + 1] == "--") throw UsageError(tr("--lang needs a value: --lang ja or --lang en"));
            value = args[i + 1];
            args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
        } else {
            ++i;
        }
    }
    return value;
}

std::optional<std::string> language_code(const std::string& setting) {
    const std::string code = setting.substr(0, setting.find_first_of("_.@:-"));
    if (code == "ja") return "ja";
    if (code == "en" || code == "C" || code == "POSIX") return "en";
    return std::nullopt;
}

namespace {

// The language the environment asks for, in gettext's order of precedence. LANGUAGE may list
// several ("fr:ja"): the first one the kit speaks wins.
std::string language_from_environment() {
    if (const char* language = std::getenv("LANGUAGE"); language != nullptr && *language != '\0') {
        std::string list = language;
        for (std::size_t start = 0; start <= list.size();) {
            const std::size_t end = std::min(list.find(':', start), list.size());
            if (auto code = language_code(list.substr(start, end - start))) return *code;
            start = end + 1;
        }
    }
    for (const char* name : {"LC_ALL", "LC_MESSAGES", "LANG"}) {
        const char* value = std::getenv(name);
        if (value == nullptr || *value == '\0') continue;
        return language_code(value).value_or("en");  // the first one set decides, as for setlocale
    }
    return "en";
}

}  // namespace

void choose_language(const std::optional<std::string>& option, const std::filesystem::path& catalogs) {
    std::string language;
    if (option) {
        auto code = language_code(*option);
        if (!code || *option == "C" || *option == "POSIX")
            throw UsageError("--lang is ja (日本語) or en (English), not '" + *option + "'");
        language = *code;
    } else {
        language = language_from_environment();
    }
    // glibc picks a catalog by the LC_MESSAGES locale, or by LANGUAGE, which it ignores while that
    // locale is "C". The C.UTF-8 locale is built into glibc (2.35 and later; Debian's for longer),
    // so with it LANGUAGE works on machines that have no ja_JP locale generated. Only the messages
    // category changes: numbers keep printing as they always did.
    for (const char* locale : {"C.UTF-8", "C.utf8", ""}) {
        if (std::setlocale(LC_MESSAGES, locale) != nullptr) break;
    }
    // Children (watch runs check) inherit the choice, and an English choice beats a Japanese LANG.
    ::setenv("LANGUAGE", language.c_str(), 1);
    ::bindtextdomain(kTextDomain, catalogs.c_str());
    // Whatever the terminal's locale says, the catalogs are UTF-8 and so is everything else printed.
    ::bind_textdomain_codeset(kTextDomain, "UTF-8");
}

}  // namespace mgpu::cli
