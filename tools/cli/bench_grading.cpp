// Grades a generated class of lesson 1 submissions (copies of the solution and the skeleton, every
// generated mutant, files that do not compile) with --jobs 1 and then --jobs 2, each from an
// empty build cache, and prints both times, the speed-up (target: 1.7 on two cores) and the time
// per submission. Every copy carries its own comment, so no two students share a checker build.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>
#include <unistd.h>

#include "bench_grading.h"
#include "exit_codes.h"
#include "kit_config.h"
#include "translate.h"

#if MGPU_HAVE_CHECKER
#include "class_grading.h"
#endif

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

constexpr double kSpeedUpTarget = 1.7;

std::string read_bench_file(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw SetupError(fill(tr("cannot read {}"), path.string()));
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

void hand_in(const fs::path& class_dir, const std::string& student, const std::string& text) {
    const fs::path file = class_dir / student / "01-devices" / "devices.cu";
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text << "\n// handed in by " << student << "\n";
}

// 30 students by default: solutions, skeletons, every mutant of lesson 1, two compile errors.
int make_class(const Kit& kit, const fs::path& class_dir, int students) {
    const std::string solution = read_bench_file(kit.root / "solutions" / "01-devices" / "devices.cu");
    const std::string skeleton = read_bench_file(kit.root / "exercises" / "01-devices" / "devices.cu");
    std::vector<fs::path> mutants;
    for (const auto& entry : fs::directory_iterator(kit.build / "checker" / "lessons" / "01-devices" / "mutants"))
        if (entry.path().extension() == ".cu") mutants.push_back(entry.path());
    std::sort(mutants.begin(), mutants.end());
    if (mutants.empty()) throw SetupError(fill(tr("lesson 1's mutants are not built: run ninja in {}"), kit.build.string()));
    char name[32];
    for (int i = 0; i < students; ++i) {
        std::snprintf(name, sizeof name, "student-%02d", i + 1);
        const int kind = i % 10;
        if (kind == 0 || kind == 5) hand_in(class_dir, name, solution);
        else if (kind == 3) hand_in(class_dir, name, skeleton);
        else if (kind == 9 && i % 20 == 9) hand_in(class_dir, name, solution + "\nnot C++ at all\n");
        else hand_in(class_dir, name, read_bench_file(mutants[static_cast<std::size_t>(i) % mutants.size()]));
    }
    return students;
}

}  // namespace

#if MGPU_HAVE_CHECKER
int run_grading_bench(const Kit& kit, const ParsedArgs& args) {
    const int students = args.value("--students")
                             ? static_cast<int>(whole_number("--students", *args.value("--students"), 1, 1000))
                             : 30;
    char pattern[] = "/tmp/mgpu-bench-grading-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw SetupError(tr("cannot create a temporary folder in /tmp"));
    const fs::path work = pattern;
    struct Cleanup {
        fs::path path;
        ~Cleanup() {
            std::error_code ignored;
            fs::remove_all(path, ignored);
        }
    } cleanup{work};
    make_class(kit, work / "class", students);
    std::cout << fill(tr("Grading {0} generated lesson 1 submissions (solutions, skeletons, mutants, compile errors), "
                         "each run from an empty build cache, on {1} cores."),
                      students, std::thread::hardware_concurrency())
              << "\n";

    double seconds[3] = {0, 0, 0};
    std::string csv[3];
    for (int jobs : {1, 2}) {
        ClassGrading settings;
        settings.class_dir = work / "class";
        settings.out_dir = work / ("grades-" + std::to_string(jobs));
        settings.lessons = {1};
        settings.jobs = jobs;
        settings.build_cache = work / ("build-cache-" + std::to_string(jobs));
        settings.use_gradebook_cache = false;
        settings.show_progress = false;
        const auto start = std::chrono::steady_clock::now();
        ClassResult result = grade_class(kit, settings);
        seconds[jobs] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        csv[jobs] = read_bench_file(result.csv_path);
        char took[32], each[32];
        std::snprintf(took, sizeof took, "%7.1f", seconds[jobs]);
        std::snprintf(each, sizeof each, "%.2f", seconds[jobs] / students);
        std::cout << "  --jobs " << jobs << ": " << took << " s  ("
                  << fill(tr("{0} s per submission; {1}, {2}"), each,
                          fill_count(static_cast<std::size_t>(result.students_at_once), N_("{} student at once"),
                                     N_("{} students at once")),
                          fill_count(static_cast<std::size_t>(result.cases_at_once), N_("{} case each"),
                                     N_("{} cases each")))
                  << ")\n" << std::flush;
    }
    const double speed_up = seconds[1] / seconds[2];
    char ratio[32], target[32];
    std::snprintf(ratio, sizeof ratio, "%.2f", speed_up);
    std::snprintf(target, sizeof target, "%.1f", kSpeedUpTarget);
    // PASS and MISS are every bench's verdicts, in every language.
    std::cout << "  " << fill(tr("speed-up: {0} (target {1})"), ratio, target) << "  "
              << (speed_up >= kSpeedUpTarget ? "PASS" : "MISS") << "\n";
    const bool same = csv[1] == csv[2];
    std::cout << "  " << fill(tr("grades.csv with one job and with two: {}"), same ? tr("identical") : tr("DIFFERENT"))
              << std::endl;
    return speed_up >= kSpeedUpTarget && same ? kExitOk : kExitFailed;
}
#else
int run_grading_bench(const Kit&, const ParsedArgs&) {
    std::cerr << "mgpu: " << tr("the checker is not part of this build of the kit, so there is no grading to time.") << "\n";
    return kExitSetupProblem;
}
#endif

}  // namespace mgpu::cli
