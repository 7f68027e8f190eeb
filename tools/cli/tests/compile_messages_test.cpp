// Typical compile mistakes (compile_mistakes/*.cu), built with `run` as a student would: the error
// must name the student's file at the marked line, say what the file's `// expect:` lines say, and
// show nothing of the simulator (its call-site parameter, headers, namespace, generated names).
// A mistake in a lesson's file graded by `grade` must read the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

const fs::path kMistakes = fs::path(MGPU_TEST_SOURCE_ROOT) / "tools" / "cli" / "tests" / "compile_mistakes";

struct ScratchFolder {
    fs::path path;
    ScratchFolder() {
        char pattern[] = "/tmp/mgpu-compile-messages-XXXXXX";
        if (::mkdtemp(pattern) != nullptr) path = pattern;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

std::vector<std::string> lines_of(const fs::path& file) {
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// g++ quotes with typographic marks in a UTF-8 locale: compared as plain ones.
std::string plain_quotes(std::string text) {
    for (const char* mark : {"\xE2\x80\x98", "\xE2\x80\x99"})
        for (std::size_t at; (at = text.find(mark)) != std::string::npos;) text.replace(at, 3, "'");
    return text;
}

// What a message must never show: each is the simulator's, not CUDA's.
void check_no_simulator_insides(const std::string& output) {
    for (const char* inside : {"mgpu::sim", "Site", "tools/sim", "tools/trace", "cu2cpp", "mgpu_", "source_location",
                               "KernelLauncher", "<command-line>", "In file included from", MGPU_TEST_BUILD_ROOT}) {
        INFO("the message shows " << std::string(inside));
        CHECK(output.find(inside) == std::string::npos);
    }
}

std::vector<fs::path> mistakes() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(kMistakes))
        if (entry.path().extension() == ".cu") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

TEST_CASE("typical mistakes are reported at the student's line, with CUDA's signatures and none of the simulator") {
    const auto files = mistakes();
    REQUIRE(files.size() >= 8);
    for (const auto& mistake : files) {
        ScratchFolder folder;
        const fs::path source = folder.path / mistake.filename();
        fs::copy_file(mistake, source);
        const auto lines = lines_of(source);
        int marked = 0;
        std::vector<std::string> expected;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (lines[i].find("// error here") != std::string::npos) marked = static_cast<int>(i) + 1;
            const auto expect = lines[i].find("// expect: ");
            if (expect != std::string::npos) expected.push_back(lines[i].substr(expect + 11));
        }
        REQUIRE(marked > 0);

        CliResult result = run_cli("run " + source.string());
        const std::string output = plain_quotes(result.output);
        INFO(mistake.filename().string() << ":\n" << output);
        CHECK(result.code == 1);
        const std::string at_line = source.string() + ":" + std::to_string(marked) + ":";
        const auto first_error = output.find(": error: ");
        REQUIRE(first_error != std::string::npos);
        // The first error is on the marked line of the student's file.
        const auto line_start = output.rfind('\n', first_error) == std::string::npos ? 0 : output.rfind('\n', first_error) + 1;
        CHECK(output.compare(line_start, at_line.size(), at_line) == 0);
        for (const auto& text : expected) {
            INFO("expected: " << text);
            CHECK(output.find(text) != std::string::npos);
        }
        check_no_simulator_insides(output);
        CHECK(output.find("hint: ") != std::string::npos);
    }
}

#if MGPU_TEST_HAVE_SOLUTIONS
TEST_CASE("a mistake in a graded lesson file reads the same way") {
    ScratchFolder folder;
    const fs::path lesson = folder.path / "03-peer-to-peer";
    fs::create_directories(lesson);
    const auto solution = lines_of(fs::path(MGPU_TEST_SOURCE_ROOT) / "solutions" / "03-peer-to-peer" / "peer_access.cu");
    std::ofstream out(lesson / "peer_access.cu");
    int broken = 0;
    for (std::size_t i = 0; i < solution.size(); ++i) {
        std::string line = solution[i];
        // The first cudaDeviceCanAccessPeer call loses its first argument.
        const auto call = line.find("cudaDeviceCanAccessPeer(&");
        if (broken == 0 && call != std::string::npos) {
            const auto comma = line.find(',', call);
            line.erase(call + 24, comma - (call + 24) + 2);
            broken = static_cast<int>(i) + 1;
        }
        out << line << "\n";
    }
    out.close();
    REQUIRE(broken > 0);
    CliResult result = run_cli("grade " + folder.path.string() + " --lesson 3");
    const std::string output = plain_quotes(result.output);
    INFO(output);
    CHECK(output.find("compile error") != std::string::npos);
    CHECK(output.find("peer_access.cu:" + std::to_string(broken) + ":") != std::string::npos);
    CHECK(output.find("cudaError_t cudaDeviceCanAccessPeer(int*, int, int)") != std::string::npos);
    check_no_simulator_insides(output);
}
#endif
