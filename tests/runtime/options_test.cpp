// Options from the environment, schedules as text, and the trace file written at exit.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "runtime_test_support.h"

TEST_CASE("schedules read and print as eager, lazy and shuffle:SEED") {
    CHECK(mgpu::sim::parse_schedule("eager").kind == mgpu::sim::ScheduleKind::Eager);
    CHECK(mgpu::sim::parse_schedule("lazy").kind == mgpu::sim::ScheduleKind::Lazy);
    const auto shuffled = mgpu::sim::parse_schedule("shuffle:1234");
    CHECK(shuffled.kind == mgpu::sim::ScheduleKind::Shuffle);
    CHECK(shuffled.seed == 1234);
    CHECK(mgpu::sim::to_string(shuffled) == "shuffle:1234");
    CHECK_THROWS_AS(mgpu::sim::parse_schedule("random"), std::invalid_argument);
    CHECK_THROWS_AS(mgpu::sim::parse_schedule("shuffle:x"), std::invalid_argument);
}

TEST_CASE("MGPU_TOPOLOGY, MGPU_SCHEDULE and MGPU_FAULTS set the options") {
    setenv("MGPU_TOPOLOGY", "islands-2x2", 1);
    setenv("MGPU_SCHEDULE", "shuffle:9", 1);
    setenv("MGPU_FAULTS", "malloc=3,stream=4,enable711=2,lost=1,nopeer=0-1,2-3", 1);
    const mgpu::sim::Options options = mgpu::sim::options_from_environment();
    unsetenv("MGPU_TOPOLOGY");
    unsetenv("MGPU_SCHEDULE");
    unsetenv("MGPU_FAULTS");
    CHECK(options.topology == "islands-2x2");
    CHECK(options.schedule.kind == mgpu::sim::ScheduleKind::Shuffle);
    CHECK(options.schedule.seed == 9);
    CHECK(options.faults.malloc_fails_at == 3);
    CHECK(options.faults.stream_create_fails_at == 4);
    CHECK(options.faults.enable_gives_711_at == 2);
    CHECK(options.faults.lost_device == 1);
    mgpu::sim::Options applied = options;
    applied.apply_cuda_visible_devices = false;
    mgpu::sim::reset_machine(applied);
    int can = -1;
    REQUIRE(cudaDeviceCanAccessPeer(&can, 2, 3) == cudaSuccess);
    CHECK(can == 0);
}

TEST_CASE("MGPU_TRACE_FILE receives the Chrome trace when the process exits") {
    char path[] = "/tmp/mgpu-runtime-trace-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        setenv("MGPU_TRACE_FILE", path, 1);
        runtime_test::bring_up("h200");
        void* p = nullptr;
        cudaMalloc(&p, 64);
        cudaMemset(p, 1, 64);
        std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    unlink(path);
    const auto document = nlohmann::json::parse(text.str());
    int mallocs = 0, memsets = 0;
    for (const auto& event : document["traceEvents"]) {
        if (event["name"] == "cudaMalloc") ++mallocs;
        if (event["ph"] == "X" && event["cat"] == "memset") ++memsets;
    }
    CHECK(mallocs == 1);
    CHECK(memsets == 1);
}

TEST_CASE("MGPU_TIMELINE_FILE receives the run's timeline page, with its title and notes, when the process exits") {
    char path[] = "/tmp/mgpu-runtime-timeline-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        setenv("MGPU_TIMELINE_FILE", path, 1);
        setenv("MGPU_TIMELINE_TITLE", "Timeline of <fill.cu>", 1);
        setenv("MGPU_TIMELINE_NOTES", "first note\nsecond note", 1);
        runtime_test::bring_up("h200", "lazy");
        void* p = nullptr;
        cudaStream_t stream;
        cudaStreamCreate(&stream);
        cudaMalloc(&p, 64);
        cudaMemsetAsync(p, 1, 64, stream);
        cudaMemset(p, 1, 64);
        std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    unlink(path);
    const std::string page = text.str();
    CHECK(page.find("<title>Timeline of &lt;fill.cu&gt;</title>") != std::string::npos);
    CHECK(page.find("<p class=\"note\">first note</p>") != std::string::npos);
    CHECK(page.find("<p class=\"note\">second note</p>") != std::string::npos);
    CHECK(page.find("lazy schedule.") != std::string::npos);
    std::size_t lanes = 0;
    for (auto at = page.find("data-lane=\"stream\""); at != std::string::npos; at = page.find("data-lane=\"stream\"", at + 1))
        ++lanes;
    CHECK(lanes == 2);   // the stream and the legacy default stream
}
