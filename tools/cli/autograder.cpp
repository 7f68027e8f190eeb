// `autograder gradescope`: a Gradescope autograder package (setup.sh, run_autograder and the
// kit) that grades one lesson with the same judge as `grade`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "args.h"
#include "command.h"
#include "exit_codes.h"
#include "lessons.h"
#include "process.h"
#include "translate.h"

namespace mgpu::cli {

namespace fs = std::filesystem;

namespace {

// Gradescope unpacks the package into /autograder/source and runs setup.sh there, as root, once
// when the image is built.
const char* kSetupScript = R"SH(#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: it installs the
# Debian packages the kit lists and builds the kit, so that grading a submission builds nothing.
set -euo pipefail
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/kit
packages=$(sed -e 's/#.*//' "$kit/tools/cli/debian-packages.txt" | tr -s '[:space:]' ' ')
apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip $packages
# Ubuntu 22.04's meson is older than the 1.0.1 the kit needs (24.04's is recent enough).
if [ "$(printf '%s\n' 1.0.1 "$(meson --version)" | sort -V | head -n 1)" != 1.0.1 ]; then
  python3 -m pip install --break-system-packages 'meson>=1.0.1' 2>/dev/null || python3 -m pip install 'meson>=1.0.1'
  hash -r
fi
"$kit/tools/mgpu" help >/dev/null   # configures and builds the kit in kit/build
)SH";

// The lesson and seed are filled in when the package is made.
std::string run_script(int lesson, std::uint64_t seed) {
    return R"SH(#!/usr/bin/env bash
# Gradescope runs this for each submission: it grades /autograder/submission (the student's
# files, as uploaded: the lesson's .cu file, or its lesson folder) and writes
# /autograder/results/results.json. AUTOGRADER_ROOT stands in for /autograder and MGPU_KIT for
# the kit's folder (the kit's own tests use both).
set -uo pipefail
root=${AUTOGRADER_ROOT:-/autograder}
kit=${MGPU_KIT:-$root/source/kit}
results=$root/results/results.json
mkdir -p "$root/results"
rm -f "$results"
# setup.sh built the kit into the image: grading checks and builds nothing.
MGPU_PREBUILT=${MGPU_PREBUILT-1} "$kit/tools/mgpu" grade "$root/submission" --lesson )SH" +
           std::to_string(lesson) + " --seed " + std::to_string(seed) + R"SH( --json "$results"
status=$?
if [ ! -s "$results" ]; then
  # The kit could not run at all: Gradescope still gets a result that says so.
  printf '{"score": 0, "output": "The autograder could not grade this submission (tools/mgpu grade exited with %s). This is not a fault of your code: tell your instructor."}\n' \
    "$status" >"$results"
fi
exit 0
)SH";
}

void write_file(const fs::path& path, const std::string& text, bool executable) {
    fs::create_directories(path.parent_path());
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file) throw SetupError("cannot write " + path.string());
    file.close();
    if (executable)
        fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
}

// The kit's files as git tracks them, so that no build folder, cache or editor leftover travels;
// a kit that is not a git checkout is copied without its build folders.
std::vector<fs::path> kit_files(const fs::path& root) {
    std::vector<fs::path> files;
    const std::string command = "git -C '" + root.string() + "' ls-files -z 2>/dev/null";
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        std::string name;
        for (int c = std::fgetc(pipe); c != EOF; c = std::fgetc(pipe)) {
            if (c != '\0') {
                name += static_cast<char>(c);
                continue;
            }
            std::error_code error;
            if (fs::is_regular_file(root / name, error)) files.emplace_back(name);
            name.clear();
        }
        if (::pclose(pipe) == 0 && !files.empty()) return files;
    }
    files.clear();
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        const std::string name = it->path().filename().string();
        if (it->is_directory() && (name.front() == '.' || fs::exists(it->path() / "meson-private"))) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file()) files.push_back(fs::relative(it->path(), root));
    }
    return files;
}

int autograder(const Kit& kit, const ParsedArgs& args) {
    if (args.positionals.empty() || args.positionals.front() != "gradescope")
        throw UsageError("say which autograder to make: gradescope (the only one so far)");
    auto lesson_text = args.value("--lesson");
    if (!lesson_text) throw UsageError("say which lesson the autograder grades: --lesson N");
    auto lesson = parse_lesson_number(*lesson_text);
    if (!lesson || !lesson_folder(kit.root / "checker" / "lessons", *lesson))
        throw UsageError(no_such_lesson(kit.root / "checker" / "lessons", lesson.value_or(0)));
    const std::uint64_t seed = args.value("--seed") ? whole_number("--seed", *args.value("--seed"), 1) : 1;
    const fs::path out = fs::absolute(args.value("--out").value_or("autograder.zip"));

    char pattern[] = "/tmp/mgpu-autograder-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw SetupError("cannot create a temporary folder in /tmp");
    const fs::path staging = pattern;
    struct Cleanup {
        fs::path path;
        ~Cleanup() {
            std::error_code ignored;
            fs::remove_all(path, ignored);
        }
    } cleanup{staging};

    write_file(staging / "setup.sh", kSetupScript, true);
    write_file(staging / "run_autograder", run_script(*lesson, seed), true);
    for (const auto& file : kit_files(kit.root)) {
        fs::create_directories((staging / "kit" / file).parent_path());
        fs::copy_file(kit.root / file, staging / "kit" / file, fs::copy_options::overwrite_existing);
    }
    // Python's zipfile keeps each file's mode, so run_autograder and tools/mgpu stay executable.
    const std::string zipper =
        "import os, sys, zipfile\n"
        "out, top = sys.argv[1], sys.argv[2]\n"
        "with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as archive:\n"
        "    for folder, dirs, files in os.walk(top):\n"
        "        dirs.sort()\n"
        "        for name in sorted(files):\n"
        "            path = os.path.join(folder, name)\n"
        "            archive.write(path, os.path.relpath(path, top))\n";
    std::error_code error;
    fs::remove(out, error);
    ExitStatus zipped = run_process({"python3", "-c", zipper, out.string(), staging.string()});
    if (!zipped.ok()) throw SetupError("python3 could not write " + out.string() + " (" + zipped.describe() + ")");
    std::cout << "Wrote " << out.string() << ": a Gradescope autograder for lesson " << *lesson << " (seed " << seed
              << ").\nUpload it as the assignment's autograder (Ubuntu 24.04 base image); students submit the lesson's "
                 "file or its lesson folder.\n";
    return kExitOk;
}

}  // namespace

const Command autograder_command = {
    N_("Grading a class"),
    {
        .name = "autograder",
        .usage = "autograder gradescope --lesson N [--out FILE.zip] [--seed S]",
        .summary = N_("Makes a Gradescope autograder package that grades one lesson."),
        .description =
            N_("The zip holds setup.sh (installs the Debian packages of tools/cli/debian-packages.txt and builds\n"
            "the kit), run_autograder (grades /autograder/submission with `tools/mgpu grade` and writes\n"
            "/autograder/results/results.json) and the kit as git tracks it."),
        .options =
            {
                {"--lesson", "N", N_("the lesson it grades")},
                {"--out", "FILE.zip", N_("where to write the package (default: autograder.zip)")},
                {"--seed", "S", N_("the seed of the random inputs, the same for every submission (default 1)")},
            },
        .max_positionals = 1,
        .examples = "  tools/mgpu autograder gradescope --lesson 3 --out lesson3-autograder.zip\n",
    },
    autograder,
};

}  // namespace mgpu::cli
