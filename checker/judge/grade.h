// The judge's entry point, called by the command line for `tools/mgpu grade DIR` and
// `tools/mgpu check [N]` (which grades the exercises/ folder). The judge builds each lesson's
// checker binary from the submission, runs every test case in its own sandboxed process and
// reports points per criterion. Exit codes (checker/README.md): 0 every check passed, 1 some
// checks failed, 3 the submission could not be built, 4 the kit itself failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mgpu::judge {

struct GradeRequest {
    std::string kit_root;            // the kit's source folder (holds checker/, exercises/, lessons/)
    std::string submission_dir;      // holds NN-name/<file>, as exercises/ does (or is itself one lesson's folder)
    bool refuse_linked_folder = false;   // submission_dir itself may not be a symbolic link (a class's student folder)
    int lesson = 0;                  // 0 = every lesson the submission has a folder for
    std::string json_out;            // Gradescope results.json ("" = none)
    std::string junit_out;           // JUnit XML ("" = none)
    std::string topology;            // run only the scenarios on this machine ("" = all)
    std::string backend = "sim";     // "sim" (the simulated machine), "cuda" (the GPUs here) or "auto" (cuda when a GPU is usable)
    bool quiet = false;              // print only the totals line(s)
    bool show_all = false;           // every failed check, not the first few of each criterion

    int jobs = 0;                              // test cases run at once; 0 = number of cores
    double case_cpu_seconds = 20.0;            // CPU time per test case, all its processes together
    double case_blocked_seconds = 10.0;        // time a case may spend with every thread waiting
    double case_wall_seconds = 0.0;            // the backstop for a machine too busy; 0 = derived
    std::size_t memory_limit_bytes = std::size_t{4} << 30;   // resident memory per test case
    std::size_t output_limit_bytes = std::size_t{8} << 20;   // output per test case
    double compile_cpu_seconds = 120.0;        // CPU time for compiling one student file
    std::uint64_t seed = 0;                    // seed for random inputs; 0 = a new one, printed
    std::string cache_dir;                     // "" = checker-cache in the build directory
    std::string lessons_dir;                   // "" = <kit_root>/checker/lessons
    std::string lessons_build_dir;             // "" = <build>/checker/lessons
    std::string timeline_dir;                  // failed overlap and ordering cases' timelines ("" = none)
    bool sandbox = true;                       // false: process groups only (no namespaces)
    bool color = false;                        // terminal colours
};

// Grades, prints the terminal report (unless quiet), writes the requested files and returns the
// exit code. Never throws.
int run_grade_command(const GradeRequest& request);

}  // namespace mgpu::judge
