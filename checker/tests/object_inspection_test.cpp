// The object checks on objects the compiler really makes: what students commonly write must pass,
// what could take over the checker must not.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "object_inspection.h"
#include "process_runner.h"

namespace fs = std::filesystem;
using namespace mgpu::judge;

namespace {

std::string run_tool(const std::vector<std::string>& argv) {
    ProcessSpec spec;
    spec.argv = argv;
    spec.environment = {"PATH=" + judge_path_variable(), "LC_ALL=C"};
    spec.limits.cpu_seconds = 60;
    spec.limits.kept_output_bytes = 4 << 20;
    ProcessOutcome outcome = run_process(spec);
    REQUIRE_MESSAGE(outcome.exited, outcome.output);
    REQUIRE_MESSAGE(outcome.exit_code == 0, outcome.output);
    return outcome.output;
}

ElfObject compile(const std::string& source) {
    fs::path dir = fs::temp_directory_path() / ("mgpu-inspect-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "probe.cpp";
    const fs::path object = dir / "probe.o";
    std::ofstream(file) << source;
    run_tool({"c++", "-std=c++20", "-O1", "-c", file.string(), "-o", object.string()});
    ElfObject elf;
    elf.sections = parse_sections(run_tool({"readelf", "-W", "-S", object.string()}));
    elf.symbols = parse_symbols(run_tool({"readelf", "-W", "-s", object.string()}));
    elf.relocations = parse_relocations(run_tool({"readelf", "-W", "-r", object.string()}));
    fs::remove_all(dir);
    return elf;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return text;
}

const std::vector<std::string> kSystem = {"environ", "stdout", "optind"};

}  // namespace

TEST_CASE("a file using iostream, a helper, a global and a static local is accepted") {
    ElfObject elf = compile(R"(
        #include <iostream>
        int counter = 0;
        static int twice(int x) { return 2 * x; }
        int work(int x) { static int calls = 0; ++calls; ++counter; std::cout << x; return twice(x) + calls; }
    )");
    CHECK(joined(forbidden_content(elf, "work.cu", kSystem)) == "");
    InterfaceCheck interface = check_interface({elf}, {"work(int)"});
    CHECK(interface.missing.empty());
    CHECK(interface.wrong_signature.empty());
}

TEST_CASE("constant-initialised standard containers at namespace scope are accepted") {
    // Their initialisers only register destructors, which the checker never runs (it leaves with _exit).
    ElfObject elf = compile(R"(
        #include <set>
        #include <utility>
        #include <vector>
        namespace { std::set<std::pair<int, int>> opened; }
        std::vector<int> sizes;
        int work(int x) { opened.insert({x, x}); sizes.push_back(x); return static_cast<int>(opened.size()); }
    )");
    CHECK(joined(forbidden_content(elf, "work.cu", kSystem)) == "");
}

TEST_CASE("a global whose constructor runs code is refused, naming what it runs") {
    ElfObject elf = compile(R"(
        #include <vector>
        std::vector<int> primes{2, 3, 5, 7};
        int work(int x) { return primes[x]; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("before main") != std::string::npos);
    CHECK(problems.find("operator new") != std::string::npos);
}

TEST_CASE("a destructor called (not registered) before main is refused") {
    ElfObject elf = compile(R"(
        #include <cstdlib>
        struct Leaver { __attribute__((noinline)) ~Leaver() { std::exit(0); } };
        static int early = (Leaver{}, 1);
        int work(int x) { return x + early; }
    )");
    CHECK(joined(forbidden_content(elf, "work.cu", kSystem)).find("before main") != std::string::npos);
}

TEST_CASE("a dynamically initialised global is refused") {
    ElfObject elf = compile(R"(
        #include <cstdlib>
        static int early = std::rand();
        int work(int x) { return x + early; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("rand") != std::string::npos);
}

TEST_CASE("a constructor attribute is refused") {
    ElfObject elf = compile(R"(
        #include <unistd.h>
        __attribute__((constructor)) static void first() { _exit(0); }
        int work(int x) { return x; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("constructor") != std::string::npos);
}

TEST_CASE("a destructor attribute is refused") {
    ElfObject elf = compile(R"(
        #include <unistd.h>
        __attribute__((destructor)) static void last() { _exit(0); }
        int work(int x) { return x; }
    )");
    CHECK(joined(forbidden_content(elf, "work.cu", kSystem)).find("exits") != std::string::npos);
}

TEST_CASE("an ifunc is refused") {
    ElfObject elf = compile(R"(
        extern "C" { static int real(int x) { return x; } static void* pick() { return (void*)real; } }
        extern "C" int work(int) __attribute__((ifunc("pick")));
    )");
    CHECK(joined(forbidden_content(elf, "work.cu", kSystem)).find("ifunc") != std::string::npos);
}

TEST_CASE("definitions in the standard library's namespace and operator new are refused") {
    ElfObject elf = compile(R"(
        #include <cstdlib>
        #include <new>
        namespace std { int clever_helper(int x) { return x; } }
        void* operator new(std::size_t size) { return std::malloc(size); }
        int work(int x) { return x; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("std::clever_helper") != std::string::npos);
    CHECK(problems.find("operator new") != std::string::npos);
}

TEST_CASE("main, C functions and library variable names are refused; own names are not") {
    ElfObject elf = compile(R"(
        #include <cstdio>
        extern "C" int puts(const char*) { return 0; }
        int optind = 3;
        int my_total = 4;
        namespace mine { int helper(int x) { return x; } }
        int main() { return 0; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("defines main") != std::string::npos);
    CHECK(problems.find("`puts`") != std::string::npos);
    CHECK(problems.find("`optind`") != std::string::npos);
    CHECK(problems.find("my_total") == std::string::npos);
    CHECK(problems.find("helper") == std::string::npos);
}

TEST_CASE("the interface check tells a missing function from a changed signature") {
    ElfObject elf = compile(R"(
        int scale(long x, int y) { return static_cast<int>(x) * y; }
        int other(int x) { return x; }
    )");
    InterfaceCheck interface = check_interface({elf}, {"scale(int, int)", "absent(float*, unsigned long)", "other(int)"});
    REQUIRE(interface.wrong_signature.size() == 1);
    CHECK(interface.wrong_signature[0].find("scale(long, int)") != std::string::npos);
    CHECK(interface.missing == std::vector<std::string>{"absent(float*, unsigned long)"});
}

TEST_CASE("calls into the checker's machinery are refused") {
    ElfObject elf = compile(R"(
        #include <string>
        namespace mgpu::check { void skip(const std::string& reason); }
        namespace mgpu::sim { void drain_all(); }
        int work(int x) { mgpu::check::skip("not today"); mgpu::sim::drain_all(); return x; }
    )");
    std::string problems = joined(forbidden_content(elf, "work.cu", kSystem));
    CHECK(problems.find("mgpu::check::skip") != std::string::npos);
    CHECK(problems.find("mgpu::sim::drain_all()") != std::string::npos);
}

TEST_CASE("the assembly shows refused calls and inline assembly on the student's own lines only") {
    // As g++ -S -g writes it: a header's inlined futex call (std::latch) is the header's.
    const std::string listing =
        "\t.file\t\"work.cpp\"\n"
        "\t.file 0 \"/tmp\" \"work.cpp\"\n"
        "\t.file 1 \"work.cu\"\n"
        "\t.file 2 \"/usr/include/c++/12/bits/atomic_wait.h\"\n"
        "f:\n"
        "\t.cfi_startproc\n"
        "\t.loc 1 12 5\n"
        "\tcall\tpread@PLT\n"
        "\t.loc 2 70 10\n"
        "\tcall\tsyscall@PLT\n"
        "\t.loc 1 14 3\n"
        "\tmovq\twrite@GOTPCREL(%rip), %rax\n"
        "#APP\n"
        "# 15 \"work.cu\" 1\n"
        "\tsyscall\n"
        "#NO_APP\n"
        "\tcall\tprintf@PLT\n"
        "\t.cfi_endproc\n";
    const AssemblyFindings found = inspect_assembly(listing, "work.cu");
    REQUIRE(found.asm_lines.size() == 1);
    CHECK(found.asm_lines[0] == 14);
    REQUIRE(found.calls.size() == 2);
    CHECK(found.calls[0] == "pread (line 12)");
    CHECK(found.calls[1] == "write (line 14)");
    CHECK(found.problems[0].find("work.cu:12: calls `pread`") != std::string::npos);
    CHECK(inspect_assembly(listing, "other.cu").calls.empty());
    CHECK(low_level_call_reason("__pread64_chk") == low_level_call_reason("pread"));
    CHECK(low_level_call_reason("printf").empty());
    CHECK(low_level_call_reason("syscall") != "");
}
