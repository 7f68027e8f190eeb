#include <doctest/doctest.h>

#include "args.h"
#include "exit_codes.h"

using namespace mgpu::cli;

namespace {

CommandSpec run_like() {
    return CommandSpec{
        .name = "run",
        .usage = "run FILE [--topology NAME] [--list]",
        .summary = "Runs a file.",
        .options = {{"--topology", "NAME", "the machine"}, {"--list", "", "list them"}},
        .max_positionals = 1,
        .takes_passthrough = true,
    };
}

}  // namespace

TEST_CASE("an option's value may follow it or be joined with '='") {
    auto spaced = parse_args(run_like(), {"a.cu", "--topology", "pcie-4"});
    CHECK(spaced.value("--topology") == "pcie-4");
    CHECK(spaced.positionals == std::vector<std::string>{"a.cu"});
    auto joined = parse_args(run_like(), {"--topology=islands-2x2", "a.cu"});
    CHECK(joined.value("--topology") == "islands-2x2");
    CHECK_FALSE(joined.value("--schedule").has_value());
}

TEST_CASE("everything after -- belongs to the program, even what looks like an option") {
    auto parsed = parse_args(run_like(), {"a.cu", "--", "--topology", "x", "-h"});
    CHECK(parsed.passthrough == std::vector<std::string>{"--topology", "x", "-h"});
    CHECK_FALSE(parsed.has("--topology"));
    CHECK_FALSE(parsed.help);
}

TEST_CASE("switches, help and the last of repeated options") {
    auto parsed = parse_args(run_like(), {"--list", "-h", "--topology", "a", "--topology", "b"});
    CHECK(parsed.has("--list"));
    CHECK(parsed.help);
    CHECK(parsed.value("--topology") == "b");
}

TEST_CASE("compiler-style options repeat and take their value joined or after them") {
    CommandSpec spec = run_like();
    spec.options.push_back({"-I", "DIR", "an include folder", true});
    spec.options.push_back({"-D", "NAME[=VALUE]", "a macro", true});
    auto parsed = parse_args(spec, {"-Icommon", "a.cu", "-I", "../inc", "-DN=4", "-D", "FAST", "--topology=x"});
    CHECK(parsed.all("-I") == std::vector<std::string>{"common", "../inc"});
    CHECK(parsed.all("-D") == std::vector<std::string>{"N=4", "FAST"});
    CHECK(parsed.value("--topology") == "x");
    CHECK(parsed.positionals == std::vector<std::string>{"a.cu"});
    CHECK(parsed.all("--topology").empty());
    CHECK_THROWS_AS(parse_args(spec, {"-I"}), UsageError);
    CHECK_THROWS_AS(parse_args(run_like(), {"-Icommon"}), UsageError);
}

TEST_CASE("mistakes are usage errors") {
    CHECK_THROWS_AS(parse_args(run_like(), {"--topolgy", "x"}), UsageError);
    CHECK_THROWS_AS(parse_args(run_like(), {"--topology"}), UsageError);
    CHECK_THROWS_AS(parse_args(run_like(), {"--topology="}), UsageError);
    CHECK_THROWS_AS(parse_args(run_like(), {"--list=yes"}), UsageError);
    CHECK_THROWS_AS(parse_args(run_like(), {"a.cu", "b.cu"}), UsageError);
    CommandSpec no_program = run_like();
    no_program.takes_passthrough = false;
    CHECK_THROWS_AS(parse_args(no_program, {"--", "x"}), UsageError);
}

TEST_CASE("help shows the usage line and every option with its value") {
    std::string help = format_help(run_like());
    CHECK(help.find("Usage: tools/mgpu run FILE") != std::string::npos);
    CHECK(help.find("--topology NAME") != std::string::npos);
    CHECK(help.find("--list") != std::string::npos);
    CHECK(help.find("the machine") != std::string::npos);
}

TEST_CASE("whole_number takes decimal digits within the range and names the option otherwise") {
    CHECK(whole_number("--seed", "0") == 0);
    CHECK(whole_number("--seed", "18446744073709551615") == 18446744073709551615ull);
    CHECK(whole_number("--gpus", "8", 1, 999999999) == 8);
    for (const char* bad : {"", "-1", "+3", " 7", "7 ", "3.5", "12a", "18446744073709551616"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(whole_number("--seed", bad), UsageError);
    }
    CHECK_THROWS_AS(whole_number("--gpus", "0", 1, 999999999), UsageError);
    CHECK_THROWS_AS(whole_number("--gpus", "1000000000", 1, 999999999), UsageError);
    try {
        whole_number("--gpus", "0", 1, 8);
        FAIL("no error for 0");
    } catch (const UsageError& error) {
        CHECK(std::string(error.what()) == "--gpus takes a whole number of at least 1 and at most 8, not '0'");
    }
}
