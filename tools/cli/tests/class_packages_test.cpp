// The packages for graders instructors use, run as their platforms run them but locally: the
// Gradescope autograder's run_autograder against a stand-in /autograder tree, and the Slurm
// array task for each chunk of a class (SLURM_ARRAY_TASK_ID set, the simulator backend) followed
// by the merge. Lesson 1 and two students (the solution and a file that does not compile) keep
// the CPU cost to a few checker runs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceRoot = MGPU_TEST_SOURCE_ROOT;
const fs::path kBuildRoot = MGPU_TEST_BUILD_ROOT;

std::string read_text(const fs::path& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

struct TemporaryFolder {
    fs::path path;
    TemporaryFolder() {
        char pattern[] = "/tmp/mgpu-class-packages-XXXXXX";
        if (::mkdtemp(pattern) != nullptr) path = pattern;
    }
    ~TemporaryFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

CliResult run_shell(const std::string& command) {
    CliResult result;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
    const int status = ::pclose(pipe);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
}

// The kit as the scripts find it: this source tree, built in this build folder.
std::string kit_environment() {
    return "MGPU_KIT='" + kSourceRoot.string() + "' MGPU_BUILD_DIR='" + kBuildRoot.string() + "' ";
}

const std::string kSolution = read_text(kSourceRoot / "solutions" / "01-devices" / "devices.cu");

}  // namespace

TEST_CASE("the Gradescope package's run_autograder grades a stand-in /autograder tree") {
    TemporaryFolder work;
    const fs::path zip = work.path / "autograder.zip";
    CliResult made = run_cli("autograder gradescope --lesson 1 --out " + zip.string());
    INFO(made.output);
    REQUIRE(made.code == 0);

    // What Gradescope needs at the top of the zip, executable, and the kit inside it.
    const fs::path root = work.path / "autograder";
    CliResult listing = run_shell(
        "python3 -c 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n"
        "for i in z.infolist(): print(oct(i.external_attr >> 16), i.filename)\nz.extractall(sys.argv[2])' '" +
        zip.string() + "' '" + (root / "source").string() + "'");
    INFO(listing.output);
    REQUIRE(listing.code == 0);
    CHECK(listing.output.find("0o100755 setup.sh\n") != std::string::npos);
    CHECK(listing.output.find("0o100755 run_autograder\n") != std::string::npos);
    CHECK(listing.output.find("0o100755 kit/tools/mgpu\n") != std::string::npos);
    CHECK(listing.output.find(" kit/tools/cli/debian-packages.txt\n") != std::string::npos);
    CHECK(listing.output.find(" kit/checker/lessons/01-devices/rubric.json\n") != std::string::npos);
    CHECK(listing.output.find("build-") == std::string::npos);
    CHECK(read_text(root / "source" / "setup.sh").find("debian-packages.txt") != std::string::npos);

    // The student uploaded the lesson's file; the package's own kit would need a build, so the
    // stand-in grades with this one.
    write_text(root / "submission" / "devices.cu", kSolution);
    CliResult graded = run_shell(kit_environment() + "AUTOGRADER_ROOT='" + root.string() + "' bash '" +
                                 (root / "source" / "run_autograder").string() + "'");
    INFO(graded.output);
    CHECK(graded.code == 0);
    auto results = nlohmann::json::parse(read_text(root / "results" / "results.json"), nullptr, false);
    REQUIRE_FALSE(results.is_discarded());
    CHECK(results["score"].get<double>() == doctest::Approx(100));
    CHECK(results["tests"].size() > 0);

    // A submission that does not compile still gets a results.json, with 0 and the reason.
    write_text(root / "submission" / "devices.cu", kSolution + "\nnot C++\n");
    graded = run_shell(kit_environment() + "AUTOGRADER_ROOT='" + root.string() + "' bash '" +
                       (root / "source" / "run_autograder").string() + "'");
    CHECK(graded.code == 0);
    results = nlohmann::json::parse(read_text(root / "results" / "results.json"), nullptr, false);
    REQUIRE_FALSE(results.is_discarded());
    CHECK(results["score"].get<double>() == 0);
    CHECK(results.dump().find("compile error") != std::string::npos);
}

TEST_CASE("the Slurm array tasks grade their chunks and the merge writes one gradebook from the cache") {
    TemporaryFolder work;
    const fs::path class_dir = work.path / "class";
    const fs::path out = work.path / "grades";
    write_text(class_dir / "ada" / "01-devices" / "devices.cu", kSolution);
    write_text(class_dir / "cy" / "01-devices" / "devices.cu", kSolution + "\nnot C++\n");
    const std::string task = "bash '" + (kSourceRoot / "tools" / "slurm" / "grade-class.sbatch").string() + "' '" +
                             class_dir.string() + "' 1 '" + out.string() + "' sim";

    CliResult no_array = run_shell(kit_environment() + task);
    CHECK(no_array.code != 0);
    CHECK(no_array.output.find("array job") != std::string::npos);

    for (int id : {1, 2}) {
        CliResult ran = run_shell(kit_environment() + "SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                                  " SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=2 " + task);
        INFO(ran.output);
        CHECK(ran.code == 0);
    }
    const std::string part1 = read_text(out / "grades-part-1-of-2.csv");
    const std::string part2 = read_text(out / "grades-part-2-of-2.csv");
    CHECK(part1.find("\nada,1,100.00,100.00,graded,") != std::string::npos);
    CHECK(part1.find("\ncy,") == std::string::npos);
    CHECK(part2.find("\ncy,1,0.00,100.00,not built,") != std::string::npos);
    CHECK(part2.find("\nada,") == std::string::npos);

    CliResult merged = run_cli("grade-class " + class_dir.string() + " --lesson 1 --out " + out.string());
    INFO(merged.output);
    CHECK(merged.code == 0);
    CHECK(merged.output.find("0 graded now, 2 from the cache") != std::string::npos);
    const std::string csv = read_text(out / "grades.csv");
    CHECK(csv.find("\nada,1,100.00,100.00,graded,") != std::string::npos);
    CHECK(csv.find("\ncy,1,0.00,100.00,not built,") != std::string::npos);
}
