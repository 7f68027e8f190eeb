// mgpu-cli: the kit's command line. tools/mgpu builds it and runs it as
//   mgpu-cli --kit-root DIR COMMAND [ARGS...]
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "exit_codes.h"
#include "language.h"
#include "translate.h"

using namespace mgpu::cli;
using mgpu::fill;
using mgpu::tr;

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    Kit kit = Kit::configured();
    if (args.size() >= 2 && args[0] == "--kit-root") {
        kit.root = args[1];
        args.erase(args.begin(), args.begin() + 2);
    }
    try {
        // The build's po/ folder holds the compiled catalogs (po/meson.build); the kit is not installed.
        choose_language(take_language_option(args), kit.build / "po");
    } catch (const UsageError& error) {
        std::cerr << "mgpu: " << error.what() << "\n";
        return kExitSetupProblem;
    }
    if (args.empty() || args[0] == "-h" || args[0] == "--help") args = {"help"};

    const Command* command = find_command(args[0]);
    if (command == nullptr) {
        std::cerr << "mgpu: " << fill(tr("there is no command '{}'. The commands are listed by: tools/mgpu help"), args[0]) << "\n";
        return kExitSetupProblem;
    }
    try {
        ParsedArgs parsed = parse_args(command->spec, std::vector<std::string>(args.begin() + 1, args.end()));
        if (parsed.help) {
            std::cout << format_help(command->spec);
            return kExitOk;
        }
        return command->run(kit, parsed);
    } catch (const UsageError& error) {
        std::cerr << "mgpu " << command->spec.name << ": " << error.what() << "\n"
                  << fill(tr("Usage: tools/mgpu {}   (more: tools/mgpu {} --help)"), command->spec.usage, command->spec.name)
                  << "\n";
        return kExitSetupProblem;
    } catch (const SetupError& error) {
        std::cerr << "mgpu " << command->spec.name << ": " << error.what() << "\n";
        return kExitSetupProblem;
    } catch (const std::exception& error) {
        std::cerr << "mgpu " << command->spec.name << ": " << error.what() << "\n";
        return kExitSetupProblem;
    }
}
