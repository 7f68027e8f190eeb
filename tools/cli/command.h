// A command of the CLI: its declaration (name, options, help) and what it does.
#pragma once

#include <vector>

#include "args.h"
#include "kit.h"

namespace mgpu::cli {

struct Command {
    const char* section;  // the heading `help` lists it under
    CommandSpec spec;
    int (*run)(const Kit& kit, const ParsedArgs& args);
};

// One per file, named after the command.
extern const Command list_command;
extern const Command check_command;
extern const Command watch_command;
extern const Command hint_command;
extern const Command quiz_command;
extern const Command reset_command;
extern const Command run_command;
extern const Command timeline_command;
extern const Command topo_command;
extern const Command grade_command;
extern const Command grade_class_command_entry;
extern const Command autograder_command;
extern const Command test_command;
extern const Command bench_command;
extern const Command validate_command;
extern const Command help_command;

// Every command, in the order a student meets them (the order `help` lists them in).
const std::vector<const Command*>& all_commands();
const Command* find_command(const std::string& name);

}  // namespace mgpu::cli
