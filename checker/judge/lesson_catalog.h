// The lessons the kit can grade: for each, what the student supplies (lesson.json), how it is
// scored (rubric.json) and how its checker binary is linked (checker-build.json, written by meson
// into the build directory). All three are data; the judge holds no lesson-specific code.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace mgpu::judge {

// A fault of the kit itself (a broken rubric, a missing build file): exit code 4.
struct KitError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Criterion {
    std::string name;            // "peer checks": test cases are named "peer checks: ..."
    double points = 0;
    std::string section;         // the lesson text's section to read when it fails ("3.3")
    std::string section_title;
    std::string description;
};

struct Rubric {
    std::string lesson_text;     // relative to the kit root: "lessons/03-peer-to-peer/README.md"
    std::vector<Criterion> criteria;

    const Criterion* find(const std::string& name) const;
    double total_points() const;
};

// The criterion a test case belongs to: the part of its name before ": ". "" if none.
std::string criterion_of(const std::string& test_case_name);

struct LessonBuild {
    std::vector<std::string> cxx;            // compiler command ("c++" or a path, maybe with wrapper)
    std::vector<std::string> cxx_flags;      // for the student's file
    std::vector<std::string> include_dirs;
    std::vector<std::string> link_archives;  // the suite (with the harness) and the libraries it needs, linked whole
    std::vector<std::string> link_flags;
    std::string cu2cpp;                      // the launch rewriter for .cu files ("" when not built)
    std::string prelude;                     // -include'd before each rewritten .cu: a precompiled header ("" none)
    std::vector<std::string> nvcc;           // real GPUs: nvcc compiles .cu files as they are (empty: the simulator)
    std::vector<std::string> nvcc_flags;
    // The second build for the suite's race cases (docs/host-races.md): added to the compile and
    // the link of the simulator build, with its own precompiled prelude. Empty: no race build, and
    // the race cases skip themselves.
    std::vector<std::string> race_flags;
    std::string race_prelude;
    std::string manifest_text;               // the file as read, part of the build cache key
};

struct Lesson {
    int number = 0;
    std::string id;                          // folder name, "03-peer-to-peer": also the submission's folder
    std::string title;
    std::string source_dir;                  // checker/lessons/<id>
    std::string exercise_dir;                // absolute: where the interface header lives
    std::vector<std::string> student_files;  // "peer_access.cu"
    std::vector<std::string> interface;      // functions the student's files must define, as nm -C prints them
    std::string interface_file;              // interface.json, where the build writes those signatures
    Rubric rubric;
    std::string build_manifest;              // path of its checker-build.json
    std::string cuda_build_manifest;         // checker-build-cuda.json: the same suite for real GPUs
};

struct LessonPaths {
    std::string kit_root;
    std::string lessons_dir;        // folder of lesson folders (with lesson.json and rubric.json)
    std::string lessons_build_dir;  // the same folders in the build directory (with checker-build.json)
};

// Every lesson with a lesson.json, in lesson order. Throws KitError naming the file at fault.
std::vector<Lesson> load_lessons(const LessonPaths& paths);

Rubric load_rubric(const std::string& path);

// A lesson's checker-build.json. Throws KitError when it is missing or malformed.
LessonBuild load_lesson_build(const std::string& path);

}  // namespace mgpu::judge
