#include "args.h"

#include <charconv>
#include <sstream>

#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

std::optional<std::string> ParsedArgs::value(const std::string& name) const {
    auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
    auto found = lists.find(name);
    if (found == lists.end()) return {};
    return found->second;
}

namespace {

const OptionSpec* find_option(const CommandSpec& spec, const std::string& name) {
    for (const auto& option : spec.options)
        if (option.name == name) return &option;
    return nullptr;
}

bool looks_like_option(const std::string& arg) {
    return arg.size() > 1 && arg[0] == '-';
}

// "-Iinclude" or "-DN=4": a repeatable one-letter option with its value joined to it.
const OptionSpec* joined_short_option(const CommandSpec& spec, const std::string& arg) {
    if (arg.size() <= 2 || arg[1] == '-') return nullptr;
    const OptionSpec* option = find_option(spec, arg.substr(0, 2));
    return option != nullptr && option->repeatable && !option->value_name.empty() ? option : nullptr;
}

}  // namespace

ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& args) {
    ParsedArgs parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            if (!spec.takes_passthrough)
                throw UsageError(fill(tr("'{}' does not pass arguments on to a program, so '--' has no use here"), spec.name));
            parsed.passthrough.assign(args.begin() + static_cast<long>(i) + 1, args.end());
            break;
        }
        if (arg == "-h" || arg == "--help") {
            parsed.help = true;
            continue;
        }
        if (!looks_like_option(arg)) {
            if (spec.max_positionals >= 0 && static_cast<int>(parsed.positionals.size()) >= spec.max_positionals) {
                if (spec.max_positionals == 0)
                    throw UsageError(fill(tr("'{}' takes no arguments besides options, but got '{}'"), spec.name, arg));
                throw UsageError(fill(tr(spec.max_positionals == 1 ? N_("'{}' takes at most {} argument; '{}' is one too many")
                                                                   : N_("'{}' takes at most {} arguments; '{}' is one too many")),
                                      spec.name, spec.max_positionals, arg));
            }
            parsed.positionals.push_back(arg);
            continue;
        }
        std::string name = arg;
        std::optional<std::string> inline_value;
        if (const OptionSpec* joined = joined_short_option(spec, arg)) {
            name = joined->name;
            inline_value = arg.substr(2);
        } else if (auto equals = arg.find('='); equals != std::string::npos) {
            name = arg.substr(0, equals);
            inline_value = arg.substr(equals + 1);
        }
        const OptionSpec* option = find_option(spec, name);
        if (option == nullptr)
            throw UsageError(fill(tr("'{}' has no option '{}'"), spec.name, name));
        if (option->value_name.empty()) {
            if (inline_value)
                throw UsageError(fill(tr("{} is a switch and takes no value (got '{}')"), name, *inline_value));
            parsed.flags.insert(name);
            continue;
        }
        if (inline_value) {
            parsed.values[name] = *inline_value;
        } else if (i + 1 < args.size() && args[i + 1] != "--") {
            parsed.values[name] = args[++i];
        } else {
            throw UsageError(fill(tr("{} needs a value: {} {}"), name, name, option->value_name));
        }
        if (parsed.values[name].empty())
            throw UsageError(fill(tr("{} was given an empty value; expected {}"), name, option->value_name));
        if (option->repeatable) parsed.lists[name].push_back(parsed.values[name]);
    }
    return parsed;
}

std::string format_help(const CommandSpec& spec) {
    std::ostringstream out;
    out << tr("Usage:") << " tools/mgpu " << spec.usage << "\n\n" << tr(spec.summary) << "\n";
    if (!spec.description.empty()) out << "\n" << tr(spec.description) << "\n";
    // --lang is taken by main() for every command, so every command's help lists it.
    std::vector<OptionSpec> options = spec.options;
    options.push_back({"--lang", "ja|en", N_("the language of the messages (else LANGUAGE, LC_ALL, LC_MESSAGES, LANG)")});
    out << "\n" << tr("Options:") << "\n";
    std::size_t width = 0;
    for (const auto& option : options) {
        std::size_t length = option.name.size() + (option.value_name.empty() ? 0 : option.value_name.size() + 1);
        width = std::max(width, length);
    }
    for (const auto& option : options) {
        std::string head = option.name + (option.value_name.empty() ? "" : " " + option.value_name);
        out << "  " << head << std::string(width - head.size() + 2, ' ') << tr(option.help) << "\n";
    }
    if (!spec.examples.empty()) out << "\n" << tr("Examples:") << "\n" << spec.examples;
    return out.str();
}

std::uint64_t whole_number(const std::string& option, const std::string& text, std::uint64_t least, std::uint64_t most) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    // from_chars takes no sign and no spaces for an unsigned type, and reports values past its range.
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    const bool fits = !text.empty() && error == std::errc() && stop == end;
    if (fits && value >= least && value <= most) return value;
    std::string range;
    if (least > 0) range += " of at least " + std::to_string(least);
    if (most < std::numeric_limits<std::uint64_t>::max())
        range += (range.empty() ? " of at most " : " and at most ") + std::to_string(most);
    throw UsageError(option + " takes a whole number" + range + ", not '" + text + "'");
}

}  // namespace mgpu::cli
