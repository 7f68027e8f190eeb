#include "message_text.h"

#include <regex>

namespace mgpu::messages {

namespace {

std::string replace_all(std::string text, const std::regex& pattern, const std::string& with) {
    return std::regex_replace(text, pattern, with);
}

// Subtracts `by` from the number that `pattern`'s first group matches, everywhere.
std::string shift_numbers(const std::string& text, const std::regex& pattern, int by, int second_group_by = 0) {
    std::string result;
    auto last = text.cbegin();
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
        const auto& match = *it;
        result.append(last, match[0].first);
        std::string piece = match[0].str();
        const auto rebase = [&](int group, int amount) {
            if (amount == 0 || !match[group].matched) return;
            const auto offset = match.position(group) - match.position(0);
            const int value = std::stoi(match[group].str()) - amount;
            piece.replace(offset, match.length(group), std::to_string(value));
        };
        // The later group first, so the earlier one's offset still holds.
        rebase(2, second_group_by);
        rebase(1, by);
        result += piece;
        last = match[0].second;
    }
    result.append(last, text.cend());
    return result;
}

}  // namespace

MessageText without_simulator_names(const std::string& input, int hidden_before, int hidden_after) {
    MessageText out{input, hidden_before, hidden_after};
    std::string& text = out.text;

    // The launcher a kernel launch becomes, as a candidate: the kernel's own signature instead.
    static const std::regex launcher_candidate(
        R"(static void mgpu::sim::KernelLauncher<[^>]*>::launch\([^)]*\) \[with Params = \{([^}]*)\}; void \(\* Kernel\)\(Params \.\.\.\) = ([^;\]]+)[^\]]*\])");
    if (std::regex_search(text, launcher_candidate)) {
        text = replace_all(text, launcher_candidate, "void $2($1)");
        out.hidden_before = 3;
        out.hidden_after = 0;
    }
    // ... and as the call that did not match: the kernel called with the student's arguments.
    static const std::regex launcher_call(
        R"(mgpu::sim::KernelLauncher<(.+?)(, (true|false))?>::launch\(const char ?\[\d+\], (::)?mgpu::sim::Site, (const )?(::)?mgpu::sim::LaunchConfig&?(, )?)");
    text = replace_all(text, launcher_call, "$1(");
    // A launch configuration that does not convert: <<<grid, block, shared bytes, stream>>>.
    static const std::regex launch_config(R"((::)?mgpu::sim::LaunchConfig::LaunchConfig\(([^)]*)\))");
    text = replace_all(text, launch_config, "<<<$2>>>");

    // The hidden call-site parameter: declared by the simulator after CUDA's own parameters.
    static const std::regex site_parameter(R"((, )?(const )?(::)?(mgpu::sim::Site|std::source_location)&?(?=\)))");
    if (std::regex_search(text, site_parameter)) {
        text = replace_all(text, site_parameter, "");
        if (out.hidden_before == 0) out.hidden_after = 1;
    }

    // Argument numbers and counts, as the student counts them.
    static const std::regex argument_number(R"(argument (\d+) (of|from))");
    text = shift_numbers(text, argument_number, out.hidden_before);
    static const std::regex expects(R"(candidate expects (\d+) arguments?, (\d+) provided)");
    text = shift_numbers(text, expects, out.hidden_before + out.hidden_after, out.hidden_before);
    text = replace_all(text, std::regex(R"(expects 1 arguments)"), "expects 1 argument");

    // Names cu2cpp gives a __device__ or __constant__ variable, and the arguments of a launch.
    text = replace_all(text, std::regex(R"(mgpu_symbol_(\w+)\.get\(\))"), "$1");
    text = replace_all(text, std::regex(R"(mgpu_(symbol|initial)_(\w+))"), "$2");
    text = replace_all(text, std::regex(R"(mgpu_kernel_arguments)"), "arguments");
    // Whatever else still names the simulator's namespace: CUDA has no such namespace.
    text = replace_all(text, std::regex(R"((::)?mgpu::sim::(kernel::)?)"), "");
    text = replace_all(text, std::regex(R"(\bstd::size_t\b)"), "size_t");
    return out;
}

}  // namespace mgpu::messages
