// `run` on lesson 3's driver catches what `check` catches on the machine and schedule it runs: the
// solution runs clean and is pointed at other machines, each mutant below fails with its cause
// named, and the skeleton shows no step as passed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSourceRoot = MGPU_TEST_SOURCE_ROOT;
const fs::path kMutants = MGPU_TEST_LESSON03_MUTANTS;

// A student's copy of the exercise folder, named as the lesson's, with peer_access.cu taken from `source`.
struct LessonCopy {
    fs::path root;
    fs::path folder;
    explicit LessonCopy(const fs::path& source) {
        char pattern[] = "/tmp/mgpu-lesson-run-XXXXXX";
        if (::mkdtemp(pattern) != nullptr) root = pattern;
        folder = root / "03-peer-to-peer";
        fs::create_directories(folder);
        for (const char* name : {"main.cu", "peer_access.h"})
            fs::copy_file(kSourceRoot / "exercises" / "03-peer-to-peer" / name, folder / name);
        fs::copy_file(source, folder / "peer_access.cu");
    }
    ~LessonCopy() {
        std::error_code ignored;
        fs::remove_all(root, ignored);
    }
};

CliResult run_lesson(const fs::path& source, const std::string& options = "") {
    LessonCopy copy(source);
    return run_cli("run " + copy.folder.string() + options);
}

bool has(const CliResult& result, const std::string& text) { return result.output.find(text) != std::string::npos; }

}  // namespace

TEST_CASE("the solution runs clean on the lesson's machine and is pointed at other machines and schedules") {
    const auto solution = kSourceRoot / "solutions" / "03-peer-to-peer" / "peer_access.cu";
    if (!std::filesystem::exists(solution)) {
        MESSAGE("skipped: this is the student edition of the kit, which has no solutions/");
        return;
    }
    CliResult result = run_lesson(solution);
    INFO(result.output);
    CHECK(result.code == 0);
    CHECK(has(result, "on islands-2x2"));
    CHECK_FALSE(has(result, "FAIL"));
    CHECK(has(result, "no problem found on islands-2x2 with the eager schedule"));
    CHECK(has(result, "tools/mgpu run 3 --schedule lazy"));
    CHECK(has(result, "tools/mgpu run 3 --topology hgx-h200-8"));
}

TEST_CASE("a copy that returns before it lands fails its step at once") {
    CliResult result = run_lesson(kMutants / "copy-returns-before-it-lands.cu");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(has(result, "FAIL  copies 1048579 floats"));
    CHECK(has(result, "its work has finished when it returns"));
    CHECK(has(result, "section 3.7"));
}

TEST_CASE("a kernel that does not wait for its chunk's copy is reported as a race at both lines") {
    CliResult result = run_lesson(kMutants / "pipeline-missing-wait-event.cu");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(has(result, "race    kernel scale"));
    CHECK(has(result, "cudaMemcpyPeerAsync at "));
    CHECK(has(result, "03-peer-to-peer/peer_access.cu:"));
    CHECK(has(result, "read: lesson 3, section 3.10"));
}

TEST_CASE("streams the pipeline never destroys are reported at the line that creates them") {
    CliResult result = run_lesson(kMutants / "pipeline-leaks-streams.cu");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(has(result, "leak"));
    CHECK(has(result, "streams created at "));
    CHECK(has(result, "never destroyed (cudaStreamDestroy)"));
    CHECK_FALSE(has(result, "main.cu"));
    CHECK(has(result, "--keep-exit-code reports them without failing"));

    // An exercise fails on what check would fail, unless the student asks to keep the exit code.
    CliResult kept = run_lesson(kMutants / "pipeline-leaks-streams.cu", " --keep-exit-code");
    INFO(kept.output);
    CHECK(kept.code == 0);
    CHECK(has(kept, "streams created at "));
    CHECK(has(kept, "with --keep-exit-code these problems are reported only"));
}

TEST_CASE("the skeleton shows no step as passed: each says it is not written yet") {
    CliResult result = run_lesson(kSourceRoot / "exercises" / "03-peer-to-peer" / "peer_access.cu");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK_FALSE(has(result, "PASS"));
    CHECK(has(result, "not written yet"));
}

TEST_CASE("on lesson 2's solution, no host thread's step starts before the steps of the threads it joined") {
    // The page draws the trace that --trace writes: every runtime call with its host thread and
    // modelled time. scale_with_threads joins its workers before it returns, so the main thread's
    // first call after a worker's last one starts no earlier than that call ended.
    char pattern[] = "/tmp/mgpu-lesson-trace-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    const fs::path scratch = pattern;
    const fs::path trace_file = scratch / "trace.json";
    CliResult result = run_cli("run " + (kSourceRoot / "solutions" / "02-splitting-work").string() +
                               " --topology pcie-4 --trace " + trace_file.string());
    INFO(result.output);
    REQUIRE(result.code == 0);
    std::ifstream in(trace_file);
    REQUIRE(in.good());
    const auto trace = nlohmann::json::parse(in);
    std::map<int, std::vector<const nlohmann::json*>> calls_of;   // host thread -> its calls
    for (const auto& event : trace.at("traceEvents"))
        if (event.value("ph", "") == "X" && event.value("pid", -1) == 0 && event.contains("args") &&
            event.at("args").contains("seq"))
            calls_of[event.at("tid").get<int>()].push_back(&event);
    REQUIRE(calls_of.count(0) == 1);
    int workers = 0;
    for (const auto& [thread, calls] : calls_of) {
        if (thread == 0) continue;
        ++workers;
        std::uint64_t last_seq = 0;
        double last_end = 0;
        for (const auto* call : calls) {
            last_seq = std::max(last_seq, call->at("args").at("seq").get<std::uint64_t>());
            last_end = std::max(last_end, call->at("ts").get<double>() + call->at("dur").get<double>());
        }
        const nlohmann::json* next = nullptr;
        for (const auto* call : calls_of[0]) {
            const auto seq = call->at("args").at("seq").get<std::uint64_t>();
            if (seq > last_seq && (next == nullptr || seq < next->at("args").at("seq").get<std::uint64_t>())) next = call;
        }
        if (next == nullptr) continue;
        CAPTURE(thread);
        CAPTURE(next->at("name").get<std::string>());
        CHECK(next->at("ts").get<double>() >= last_end - 1e-6);
    }
    CHECK(workers >= 4);   // the solution's main runs scale_with_threads on all four GPUs at least once
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
}
