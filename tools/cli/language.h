// The language the CLI speaks: `--lang ja|en` given anywhere before "--", else the usual
// environment (LANGUAGE, LC_ALL, LC_MESSAGES, LANG). Japanese needs no ja_JP locale on the
// machine: students and test machines often have none generated.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mgpu::cli {

// Removes "--lang X" or "--lang=X" from the arguments (those after "--" belong to a program) and
// returns X. Throws UsageError when --lang has no value.
std::optional<std::string> take_language_option(std::vector<std::string>& args);

// "ja" or "en" from an option value or an environment setting such as "ja_JP.UTF-8"; nullopt for
// a language the kit has no catalog for.
std::optional<std::string> language_code(const std::string& setting);

// Points gettext at the catalogs under `catalogs` (the build's po/ folder) in the chosen language.
// Throws UsageError for an option naming a language the kit does not speak.
void choose_language(const std::optional<std::string>& option, const std::filesystem::path& catalogs);

}  // namespace mgpu::cli
