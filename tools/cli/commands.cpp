#include "command.h"

namespace mgpu::cli {

const std::vector<const Command*>& all_commands() {
    static const std::vector<const Command*> commands = {
        &list_command, &check_command, &watch_command, &hint_command, &run_command, &timeline_command, &quiz_command, &reset_command, &topo_command, &grade_command, &grade_class_command_entry, &autograder_command, &test_command, &bench_command, &validate_command,
        &help_command,
    };
    return commands;
}

const Command* find_command(const std::string& name) {
    for (const Command* command : all_commands())
        if (command->spec.name == name) return command;
    return nullptr;
}

}  // namespace mgpu::cli
