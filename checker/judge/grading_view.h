// What a student's code may see while it is compiled and tested: the folders the sandbox empties.
// Hidden: the kit (solutions/, the checker's sources, the lessons' master sources), the build
// (mutants, the judge's cache and result files), and the submission's folder with the folder
// around it, where a class keeps the other students' work. Shown again inside them (sandbox.h):
// only what the build needs, the lesson's exercise header folder, the simulator's headers and
// the archives it links; the mutants beside those archives are hidden again.
#pragma once

#include <string>
#include <vector>

namespace mgpu::judge {

struct GradingViewFolders {
    std::string kit_root, build_root, lessons_dir, lessons_build_dir, cache_dir, submission_dir;
    std::vector<std::string> toolchain;   // the compilers run: a folder holding one is never hidden
};

struct GradingView {
    std::vector<std::string> hidden_dirs;
    std::vector<std::string> hidden_again;
};

GradingView grading_view(const GradingViewFolders& folders);

}  // namespace mgpu::judge
