// mgpu-cli: the kit's command line. tools/mgpu builds it and runs it as
//   mgpu-cli --kit-root DIR COMMAND [ARGS...]
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "exit_codes.h"

using namespace mgpu::cli;

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    Kit kit = Kit::configured();
    if (args.size() >= 2 && args[0] == "--kit-root") {
        kit.root = args[1];
        args.erase(args.begin(), args.begin() + 2);
    }
    if (args.empty() || args[0] == "-h" || args[0] == "--help") args = {"help"};

    const Command* command = find_command(args[0]);
    if (command == nullptr) {
        std::cerr << "mgpu: there is no command '" << args[0] << "'. The commands are listed by: tools/mgpu help\n";
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
                  << "Usage: tools/mgpu " << command->spec.usage << "   (more: tools/mgpu " << command->spec.name
                  << " --help)\n";
        return kExitSetupProblem;
    } catch (const SetupError& error) {
        std::cerr << "mgpu " << command->spec.name << ": " << error.what() << "\n";
        return kExitSetupProblem;
    } catch (const std::exception& error) {
        std::cerr << "mgpu " << command->spec.name << ": " << error.what() << "\n";
        return kExitSetupProblem;
    }
}
