#include <algorithm>
#include <iostream>

#include "command.h"
#include "exit_codes.h"
#include "translate.h"

namespace mgpu::cli {

namespace {

// "run FILE.cu|LESSON [--topology NAME|FILE] ..." -> "run FILE.cu|LESSON"
std::string synopsis(const CommandSpec& spec) {
    auto options = spec.usage.find(" [-");
    return options == std::string::npos ? spec.usage : spec.usage.substr(0, options);
}

void print_overview() {
    std::cout << tr("mgpu: a multi-GPU CUDA course whose exercises grade themselves, on a simulated multi-GPU machine.") << "\n";
    std::size_t width = 0;
    for (const Command* command : all_commands()) width = std::max(width, synopsis(command->spec).size());
    std::string section;
    for (const Command* command : all_commands()) {
        if (section != command->section) {
            section = command->section;
            std::cout << "\n" << tr(section) << ":\n";
        }
        std::string head = synopsis(command->spec);
        std::cout << "  tools/mgpu " << head << std::string(width - head.size() + 2, ' ')
                  << tr(command->spec.summary) << "\n";
    }
    std::cout << "\n" << tr("Each command explains its options: tools/mgpu COMMAND --help") << "\n"
              << tr("Language: --lang ja or --lang en with any command, else LANG (ja_JP.UTF-8: Japanese).") << "\n"
              << tr("Exit codes: 0 all good, 1 something did not pass, 2 the command could not do its job "
                    "(the message says why).") << "\n";
}

int help(const Kit&, const ParsedArgs& args) {
    if (args.positionals.empty()) {
        print_overview();
        return kExitOk;
    }
    const Command* command = find_command(args.positionals.front());
    if (command == nullptr) throw UsageError(fill(tr("there is no command '{}'"), args.positionals.front()));
    std::cout << format_help(command->spec);
    return kExitOk;
}

}  // namespace

const Command help_command = {
    N_("The kit itself"),
    {
        .name = "help",
        .usage = "help [COMMAND]",
        .summary = N_("Lists the commands, or explains one."),
        .max_positionals = 1,
    },
    help,
};

}  // namespace mgpu::cli
