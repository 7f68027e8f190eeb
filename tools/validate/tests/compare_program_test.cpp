// conformance-compare itself, run as a program: its usage errors, and the whole pipeline with the
// simulator on both sides (two small conformance programs), which must find no difference.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_probe.h"
#include "program_run.h"

namespace {

struct Result {
    int exit_code = -1;
    std::string output;
};

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string scratch_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("validate-compare-" + std::to_string(::getpid()) + "-" + name)).string();
}

Result run(const std::string& program, const std::vector<std::string>& arguments) {
    mgpu::validate::ProgramRun request;
    request.program = program;
    request.arguments = arguments;
    request.timeout_seconds = 600;   // a backstop only
    const auto outcome = mgpu::validate::run_program(request);
    REQUIRE(outcome.started);
    REQUIRE(outcome.exited);
    return {outcome.exit_code, outcome.output};
}

Result compare(const std::vector<std::string>& arguments) { return run(MGPU_CONFORMANCE_COMPARE, arguments); }

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, ',')) parts.push_back(part);
    return parts;
}

// The number of test cases a doctest program holds, as the program itself counts them.
int case_count(const std::string& program) {
    const Result counted = run(program, {"--count"});
    const auto colon = counted.output.rfind(": ");
    REQUIRE(colon != std::string::npos);
    return std::stoi(counted.output.substr(colon + 2));
}

}  // namespace

TEST_CASE("conformance-compare --help documents the options, the summary line and the exit codes") {
    const Result help = compare({"--help"});
    CHECK(help.exit_code == 0);
    for (const char* expected : {"--markdown FILE", "--real-side real|sim", "--program NAME", "Exit status",
                                 "conformance: N cases compared, D differ, S skipped on the real machine",
                                 "  0  no test case differs", "  1  some test case differs", "  2  the command line is wrong",
                                 "  4  the real side could not run"})
        CHECK_MESSAGE(help.output.find(expected) != std::string::npos, expected);
}

TEST_CASE("conformance-compare answers a wrong command line with 2 and says what is wrong") {
    const Result unknown = compare({"--frobnicate"});
    CHECK(unknown.exit_code == 2);
    CHECK(unknown.output.find("unknown option --frobnicate") != std::string::npos);
    const Result side = compare({"--real-side", "somewhere"});
    CHECK(side.exit_code == 2);
    const Result program = compare({"--real-side", "sim", "--program", "no-such-program"});
    CHECK(program.exit_code == 2);
    CHECK(program.output.find("errors") != std::string::npos);   // it lists the programs there are
    const Result missing_value = compare({"--markdown"});
    CHECK(missing_value.exit_code == 2);
}

TEST_CASE("with the simulator on both sides, every case is compared and none differs") {
    const auto names = split(MGPU_VALIDATE_TEST_PROGRAMS);
    const auto paths = split(MGPU_VALIDATE_TEST_PROGRAM_PATHS);
    REQUIRE(names.size() == paths.size());
    int expected_cases = 0;
    std::vector<std::string> arguments = {"--real-side", "sim"};
    for (std::size_t i = 0; i < names.size(); ++i) {
        expected_cases += case_count(paths[i]);
        arguments.insert(arguments.end(), {"--program", names[i]});
    }
    REQUIRE(expected_cases > 0);
    const std::string markdown_file = scratch_path("report.md");
    arguments.insert(arguments.end(), {"--markdown", markdown_file});

    const Result result = compare(arguments);
    CHECK(result.exit_code == 0);
    const std::string summary = "conformance: " + std::to_string(expected_cases) +
                                " cases compared, 0 differ, 0 skipped on the real machine";
    CHECK_MESSAGE(result.output.find(summary + "\n") != std::string::npos, result.output);
    const std::string markdown = read_all(markdown_file);
    CHECK(markdown.rfind("## Conformance: the simulator against ", 0) == 0);
    CHECK(markdown.find(summary) != std::string::npos);
    std::filesystem::remove(markdown_file);
}

TEST_CASE("without a GPU the real side cannot run: exit 4, said plainly") {
    const auto gpu = mgpu::judge::probe_gpu();
    if (gpu.usable) {
        MESSAGE("this machine has a GPU: the real side can run here, so there is no refusal to check");
        return;
    }
    // A stand-in for the real-runtime program, so that the refusal cannot come from a build
    // without one: only the missing GPU is left to refuse.
    const std::filesystem::path real_dir = scratch_path("real-dir");
    std::filesystem::create_directories(real_dir);
    std::ofstream(real_dir / "conformance-real-errors") << "";
    const Result result = compare({"--program", "errors", "--real-dir", real_dir.string()});
    std::filesystem::remove_all(real_dir);
    CHECK(result.exit_code == 4);
    CHECK(result.output.find("the real side cannot run") != std::string::npos);
    CHECK_MESSAGE(result.output.find(gpu.reason) != std::string::npos, result.output);
}
