// `mgpu validate` as a user runs it. Without a GPU here, --real-side sim lets the simulator stand
// in for the GPUs, so every part of the report is produced; --quick keeps it short.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "cli_invocation.h"

namespace {

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string last_line(const std::string& text) {
    std::string trimmed = text;
    while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
    return trimmed.substr(trimmed.rfind('\n') + 1);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct ValidateRun {
    CliResult cli;
    std::string report;   // the markdown report --out wrote
};

// `validate OPTIONS --out FILE` on this source tree's kit; the report file is read and removed.
ValidateRun run_validate(const std::string& options) {
    const auto report_path = std::filesystem::temp_directory_path() /
                             ("mgpu-validate-test-" + std::to_string(::getpid()) + ".md");
    ValidateRun run;
    run.cli = run_cli("--kit-root '" MGPU_TEST_SOURCE_ROOT "' validate " + options + " --out '" + report_path.string() + "'");
    run.report = read_file(report_path);
    std::filesystem::remove(report_path);
    return run;
}

}  // namespace

TEST_CASE("with the simulator standing in for two H200s, every part runs and agrees") {
    // Lesson 3 stands for the grading part (the lessons' own tests grade every mutant of every lesson).
    const ValidateRun validated = run_validate("--real-side sim --quick --gpus 2 --seed 7 --lesson 3");
    const CliResult& result = validated.cli;
    const std::string& report = validated.report;
    INFO(result.output);
    CHECK(result.code == 0);
    CHECK(last_line(result.output).rfind("validate: PASS - ", 0) == 0);
    CHECK(has(last_line(result.output), "0 differ or miss a target"));

    for (const char* heading : {"# mgpu validate", "## Machine", "## Conformance", "## Grading with --backend sim",
                                "## Peer-to-peer matrix", "## NCCL all-reduce", "## Summary"}) {
        CAPTURE(heading);
        CHECK(has(report, heading));
    }
    // conformance-compare's own markdown section is kept, one level down.
    CHECK(has(report, "### Conformance"));
    // The markdown report ends with the same summary line the terminal does.
    CHECK(last_line(report) == last_line(result.output));
    // Lesson 3: the solution, the skeleton and one mutant for each of its five criteria.
    CHECK(has(report, "**AGREE** lesson 3 reference solution (full marks expected)"));
    CHECK(has(report, "**AGREE** lesson 3 skeleton"));
    CHECK(has(report, "Only these lessons are graded (--lesson): 3."));
    CHECK_FALSE(has(report, "lesson 1 reference solution"));
    for (const char* criterion : {"peer checks", "directional enabling", "copy results", "async overlap", "cleanup"}) {
        CAPTURE(criterion);
        CHECK(has(report, std::string("(must lose \"") + criterion + "\" only)"));
    }
    // Two GPUs: both ordered pairs are in the tables, the solution's copy is held to its target.
    CHECK(has(report, "| 0 -> 1 |"));
    CHECK(has(report, "| 1 -> 0 |"));
    CHECK(has(report, "**AGREE** Unidirectional bandwidth, peer access on"));
    CHECK(has(report, "**AGREE** lesson 3's copy_between_devices against cudaMemcpyPeerAsync"));
    // NCCL: nccl-perf on the stand-in and on the model, size by size from 1 MiB.
    CHECK(has(report, "| 1048576 |"));
    CHECK(has(report, "**AGREE** NCCL all-reduce busbw on 2 GPUs: 3 of 3 sizes within the agreement range"));
}

TEST_CASE("with one GPU, the NCCL part says what it would measure and counts neither way") {
    const ValidateRun validated = run_validate("--real-side sim --quick --gpus 1 --only nccl");
    INFO(validated.cli.output);
    CHECK(validated.cli.code == 0);
    CHECK(has(validated.report, "**NOT TESTABLE HERE** NCCL all-reduce busbw: needs 2 GPUs or more"));
    CHECK(has(validated.report, "nccl-perf --op all_reduce -g N"));
}

TEST_CASE("a stand-in machine that is not the model shows as differences, and the exit code is 1") {
    // islands-2x2 peers only within 0-1 and 2-3; the model (hgx-h200-8) peers every pair.
    const ValidateRun validated = run_validate("--real-side sim --quick --topology islands-2x2 --only machine,p2p");
    const CliResult& result = validated.cli;
    const std::string& report = validated.report;
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(last_line(result.output).rfind("validate: FAIL - ", 0) == 0);
    CHECK(has(report, "**DIFFER** peer access matrix (cudaDeviceCanAccessPeer): the model differs: 0->2 cannot peer here"));
    CHECK(has(report, "| 0 -> 2 |"));
    CHECK(has(report, "Only these parts were run (--only): machine, p2p."));
    CHECK_FALSE(has(report, "## Grading"));
}

TEST_CASE("without a GPU, validate says what it needs and exits 4") {
    const CliResult result = run_cli("validate", "CUDA_VISIBLE_DEVICES=");
    CHECK(result.code == 4);
    CHECK(has(result.output, "NVIDIA GPUs"));
    CHECK(has(result.output, "CUDA Toolkit 12 or 13"));
    CHECK(has(result.output, "--real-side sim"));
}

TEST_CASE("validate refuses options it does not know, with exit 2") {
    CHECK(run_cli("validate --real-side cloud").code == 2);
    CHECK(run_cli("validate --gpus none").code == 2);
    CHECK(run_cli("validate --topology hgx-h200-8").code == 2);
    CHECK(run_cli("validate --real-side sim --only everything").code == 2);
    CHECK(run_cli("validate --real-side sim --lesson nine").code == 2);
}
