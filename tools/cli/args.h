// A small command-line parser: each command declares its options, the parser turns argv into
// values and positionals, and the same declaration writes the command's --help.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mgpu::cli {

struct OptionSpec {
    std::string name;        // "--topology"
    std::string value_name;  // "NAME|FILE"; empty for a flag that takes no value
    std::string help;
    // Given as often as wanted, each value kept in order (ParsedArgs::all); a one-letter option
    // ("-I") also takes its value joined to it, as compilers do ("-Iinclude", "-DN=4").
    bool repeatable = false;
};

struct CommandSpec {
    std::string name{};          // "run"
    std::string usage{};         // "run FILE.cu|LESSON [options] [-- ARGS]"
    std::string summary{};       // one line for the overview
    std::string description{};   // paragraphs for --help
    std::vector<OptionSpec> options{};
    int max_positionals = 0;     // -1: any number
    bool takes_passthrough = false;  // accepts "-- ARGS" for a program
    std::string examples{};      // lines shown under "Examples:"
};

struct ParsedArgs {
    std::map<std::string, std::string> values;  // options given with a value (a repeatable one: the last)
    std::map<std::string, std::vector<std::string>> lists;  // every value of a repeatable option, in order
    std::set<std::string> flags;                // flags given
    std::vector<std::string> positionals;
    std::vector<std::string> passthrough;       // everything after "--"
    bool help = false;

    bool has(const std::string& name) const { return values.count(name) > 0 || flags.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::vector<std::string> all(const std::string& name) const;
};

// Throws UsageError naming the offending argument.
ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& args);

std::string format_help(const CommandSpec& spec);

// The value of a numeric option: decimal digits only (no sign, no spaces), from `least` to
// `most`. Throws UsageError naming the option and the range otherwise.
std::uint64_t whole_number(const std::string& option, const std::string& text, std::uint64_t least = 0,
                           std::uint64_t most = std::numeric_limits<std::uint64_t>::max());

}  // namespace mgpu::cli
