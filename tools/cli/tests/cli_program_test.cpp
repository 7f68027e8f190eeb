#include <doctest/doctest.h>

#include "cli_invocation.h"

TEST_CASE("the overview lists the commands in the order a student needs them") {
    CliResult result = run_cli("");
    CHECK(result.code == 0);
    auto check = result.output.find("tools/mgpu check");
    auto run = result.output.find("tools/mgpu run");
    auto grade = result.output.find("tools/mgpu grade");
    auto test = result.output.find("tools/mgpu test");
    REQUIRE(check != std::string::npos);
    REQUIRE(run != std::string::npos);
    REQUIRE(grade != std::string::npos);
    REQUIRE(test != std::string::npos);
    CHECK(check < run);
    CHECK(run < grade);
    CHECK(grade < test);
    CHECK(run_cli("help").output == result.output);
}

TEST_CASE("every command explains itself with --help") {
    for (const char* command : {"list", "check", "watch", "hint", "run", "quiz", "reset", "topo", "grade", "grade-class", "autograder", "test", "bench", "help"}) {
        CAPTURE(command);
        CliResult result = run_cli(std::string(command) + " --help");
        CHECK(result.code == 0);
        CHECK(result.output.find(std::string("Usage: tools/mgpu ") + command) == 0);
    }
    CHECK(run_cli("help run").output == run_cli("run --help").output);
}

TEST_CASE("an unknown command or option is a usage problem (exit 2) that names it") {
    CliResult command = run_cli("frobnicate");
    CHECK(command.code == 2);
    CHECK(command.output.find("'frobnicate'") != std::string::npos);
    CliResult option = run_cli("topo --colour");
    CHECK(option.code == 2);
    CHECK(option.output.find("--colour") != std::string::npos);
    CHECK(option.output.find("topo --help") != std::string::npos);
}

TEST_CASE("a topology that does not exist is refused with exit 2 before anything runs") {
    CliResult topo = run_cli("topo --topology no-such-machine");
    CHECK(topo.code == 2);
    CHECK(topo.output.find("no-such-machine") != std::string::npos);
    CliResult run = run_cli("run /nonexistent.cu --topology no-such-machine");
    CHECK(run.code == 2);
}

TEST_CASE("run refuses a malformed schedule and a missing target") {
    CliResult schedule = run_cli("run 3 --schedule shuffle");
    CHECK(schedule.code == 2);
    CHECK(schedule.output.find("shuffle:SEED") != std::string::npos);
    CliResult target = run_cli("run /nonexistent/file.cu");
    CHECK(target.code == 2);
    CHECK(target.output.find("/nonexistent/file.cu") != std::string::npos);
    CHECK(run_cli("run").code == 2);
}
