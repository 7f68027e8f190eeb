#include <doctest/doctest.h>

#include "compile_hint.h"

using mgpu::cli::compile_hint;

TEST_CASE("a missing main() points to building the whole lesson") {
    auto hint = compile_hint("/usr/bin/ld: crt1.o: in function `_start':\n(.text+0x1b): undefined reference to `main'\n");
    CHECK(hint.find("tools/mgpu run 3") != std::string::npos);
}

TEST_CASE("an undefined CUDA call is told apart from an undefined function of the student's") {
    auto cuda = compile_hint("x.o: in function `main':\nx.cu:(.text+0x9): undefined reference to `cudaGraphLaunch'\n");
    auto own = compile_hint("x.o: in function `main':\nx.cu:(.text+0x9): undefined reference to `can_reach(int, int)'\n");
    CHECK(cuda.find("simulated machine does not provide") != std::string::npos);
    CHECK(own.find("declared but never defined") != std::string::npos);
}

TEST_CASE("an ordinary compile error asks to fix the first error") {
    auto hint = compile_hint("a.cu:4:12: error: expected ';' before '}' token\n");
    CHECK(hint.find("first error") != std::string::npos);
}
