// cu2cpp: rewrites a CUDA source file into C++ for the multi-GPU simulator (see rewriter.h).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter.h"
#include "translation.h"

namespace {

constexpr const char* kHelp = R"(usage: cu2cpp INPUT.cu [-o] OUTPUT.cpp [options]

Rewrites a CUDA source file into C++ that g++ compiles against the multi-GPU simulator:
  kernel<<<grid, block, shmem, stream>>>(args)  becomes a call of the simulator's launch template;
  extern __shared__ T name[];                  a pointer to the running block's dynamic shared memory;
  __shared__                                   static (blocks run one after another);
and nvcc's predefined macros (__CUDACC__, ...) and `#include <mgpu/sim/device_language.h>` come first. #line directives keep compiler errors
and the simulator's messages on the original file and lines.

Options:
  -o, --output FILE        where to write the C++ (a second plain argument works too)
  -I, --include-dir DIR    look for local headers here too, after the including file's folder
  --display-name NAME      the file name that #line, errors and messages show (default: INPUT)
  --depfile FILE           write a Makefile rule listing every file read, for build systems
  -h, --help               show this text

Local headers: cu2cpp follows headers included in quotes (found beside the file that includes
them, or in an --include-dir) and in angle brackets (found in an --include-dir). One that
launches kernels, declares __shared__ variables or uses __noinline__, or includes such a header,
is rewritten into OUTPUT.headers/ beside the output and the #include names that copy; any other
is included by its full path from where it is. A header that only the compiler's own -I options
find is left as it is: it must not launch kernels or declare extern __shared__ arrays, or its
folder must be given with --include-dir.

Limits:
  - A kernel is launched by its name (k, ns::k, k<float, 4>), not through a function pointer.
  - A kernel template launched without template arguments (k<<<g, b>>>(p) for
    template <class T> __global__ void k(T*)) must be declared in the file or in a header
    cu2cpp finds, so that it can let the compiler deduce them.
  - Overloaded kernels cannot be launched by their plain name.
  - __noinline__ is rewritten in the files cu2cpp reads, not in other headers.

Exit status: 0 when the output was written, 1 on an error in the source ("file:line: error: ..."),
2 on a usage error.
)";

int usage_error(const std::string& message) {
    std::fprintf(stderr, "cu2cpp: %s\nRun 'cu2cpp --help' for the usage.\n", message.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    cu2cpp::Invocation invocation;
    std::vector<std::string> plain;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&](std::string& into) {
            if (i + 1 >= argc) return false;
            into = argv[++i];
            return true;
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(kHelp, stdout);
            return 0;
        }
        bool ok = true;
        if (arg == "-o" || arg == "--output") ok = value(invocation.output);
        else if (arg == "-I" || arg == "--include-dir") {
            std::string dir;
            ok = value(dir);
            invocation.include_dirs.push_back(dir);
        } else if (arg.starts_with("-I") && arg.size() > 2) invocation.include_dirs.emplace_back(arg.substr(2));
        else if (arg == "--display-name") ok = value(invocation.display_name);
        else if (arg == "--depfile") ok = value(invocation.depfile);
        else if (arg.starts_with("-") && arg != "-") return usage_error("unknown option '" + std::string(arg) + "'");
        else plain.emplace_back(arg);
        if (!ok) return usage_error("option '" + std::string(arg) + "' needs a value");
    }
    if (plain.empty()) return usage_error("no input file");
    invocation.input = plain[0];
    if (plain.size() == 2 && invocation.output.empty()) invocation.output = plain[1];
    else if (plain.size() > 1) return usage_error("too many files: give one input and one output");
    if (invocation.output.empty()) return usage_error("no output file: add -o OUTPUT.cpp");

    try {
        cu2cpp::translate(invocation);
    } catch (const cu2cpp::RewriteError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "cu2cpp: error: %s\n", error.what());
        return 1;
    }
    return 0;
}
