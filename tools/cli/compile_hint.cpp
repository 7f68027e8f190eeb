#include "compile_hint.h"

#include "translate.h"

namespace mgpu::cli {

namespace {

bool says(const std::string& text, const char* phrase) { return text.find(phrase) != std::string::npos; }

}  // namespace

std::string compile_hint(const std::string& diagnostics) {
    if (says(diagnostics, "undefined reference to `main'"))
        return tr("This code has no main(): run its lesson or folder instead (tools/mgpu run 3), so the file "
               "with main() is built with it.");
    if (says(diagnostics, "undefined reference to `cuda") || says(diagnostics, "undefined reference to `nccl"))
        return tr("The program calls a CUDA or NCCL function that the simulated machine does not provide (named "
               "above); the lessons only need the ones it has.");
    if (says(diagnostics, "undefined reference to"))
        return tr("A function is declared but never defined: write its body with the same name and parameter "
               "types as its declaration, or build the whole folder so the file that defines it is included.");
    if (says(diagnostics, "multiple definition of"))
        return tr("Something is defined in two files: keep one definition and declare it in the other file "
               "(or in a shared header).");
    if (says(diagnostics, "No such file or directory") && says(diagnostics, "#include"))
        return tr("A header was not found: includes are searched in the file's own folder and in the "
               "simulator's headers (cuda_runtime.h, nccl.h).");
    if (says(diagnostics, "was not declared in this scope"))
        return tr("A name is used that was never declared: check its spelling and that the header declaring it "
               "is included.");
    return tr("Fix the first error listed above (file:line); the ones after it often follow from it.");
}

}  // namespace mgpu::cli
