// Builds a lesson's checker binary from a submission: the launch rewriter for .cu files, the
// compiler on each student file alone (its errors are shown as the compiler wrote them), a look at
// what the object defines, then a link with the prebuilt suite and libraries. Builds are cached
// by a hash of everything that goes into them.
#pragma once

#include <string>
#include <vector>

#include "lesson_catalog.h"
#include "sandbox.h"

namespace mgpu::judge {

struct SubmissionFile {
    std::string name;       // as lesson.json names it: "peer_access.cu"
    std::string path;       // where it is on disk
    std::string display;    // how messages name it: the path as the student gave it
};

struct BuildSettings {
    std::string cache_dir;
    const Sandbox* sandbox = nullptr;
    std::vector<std::string> hidden_dirs;   // what the compiler must not see (grading_view.h)
    std::vector<std::string> hidden_again;
    double compile_cpu_seconds = 120.0;     // a template bomb ends here
    std::vector<std::string> readable_paths;   // set by build_checker: headers, archives, the rewriter
    std::vector<std::string> toolchain_dirs;   // set by build_checker (toolchain_dirs below)
};

// Where the lesson's compilers are installed, when outside /usr (which the sandbox always shows):
// the folder above their bin/ (the CUDA Toolkit under /opt, say), so that the sandbox can show it.
std::vector<std::string> toolchain_dirs(const LessonBuild& build);

struct BuiltChecker {
    bool ok = false;
    std::string problem_kind;    // "compile error", "forbidden symbol", "missing function", ...
    std::string problem;         // full text for the student
    std::string binary;          // the checker binary (ok only)
    std::string race_binary;     // the same under ThreadSanitizer, for the race cases ("" = none built)
    std::string cache_entry;     // its folder in the cache
    bool from_cache = false;
};

// The compiler and its options for one file of a submission on the simulator, without the file
// and the output: .cu files (rewritten) also get the lesson's precompiled prelude. `race_build`:
// the build for the race cases (LessonBuild::race_flags, with its own prelude).
std::vector<std::string> simulator_compile_command(const Lesson& lesson, const LessonBuild& build, bool cuda_file,
                                                   bool race_build);

// Throws KitError for faults of the kit (the rewriter or the compiler missing, a cache that
// cannot be written); everything the student's files cause is in the result.
BuiltChecker build_checker(const Lesson& lesson, const LessonBuild& build, const std::vector<SubmissionFile>& files,
                           const BuildSettings& settings);

}  // namespace mgpu::judge
