// End to end: `run` builds small CUDA programs against the simulator and runs them. These need
// the launch rewriter and the simulator's runtime, so they form a test program of their own.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

// A folder of its own for each test's sources, removed afterwards.
struct ScratchFolder {
    fs::path path;
    ScratchFolder() {
        char pattern[] = "/tmp/mgpu-cli-run-XXXXXX";
        if (::mkdtemp(pattern) != nullptr) path = pattern;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return path / name;
    }
};

// Counts the devices, fills four ints on device 0 with a kernel, prints them and its first
// argument, and exits with 3 when the values are right: a code no failure path returns.
const char* kProgram = R"(#include <cstdio>

__global__ void fill(int* out, int base)
{
    out[threadIdx.x] = base + static_cast<int>(threadIdx.x);
}

int main(int argc, char** argv)
{
    int count = 0;
    cudaGetDeviceCount(&count);
    int* values = nullptr;
    cudaMalloc(&values, 4 * sizeof(int));
    fill<<<1, 4>>>(values, 40);
    int host[4] = {0, 0, 0, 0};
    cudaMemcpy(host, values, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(values);
    std::printf("devices=%d values=%d,%d,%d,%d arg=%s\n", count, host[0], host[1], host[2], host[3],
                argc > 1 ? argv[1] : "-");
    return host[3] == 43 ? 3 : 1;
}
)";

}  // namespace

TEST_CASE("run builds a .cu file, runs it on the chosen machine and passes its exit code through") {
    ScratchFolder folder;
    fs::path source = folder.write("fill.cu", kProgram);
    CliResult result = run_cli("run " + source.string() + " --topology hgx-h200-8 -- hello");
    INFO(result.output);
    CHECK(result.code == 3);
    CHECK(result.output.find("devices=8 values=40,41,42,43 arg=hello") != std::string::npos);

    // CUDA_VISIBLE_DEVICES narrows the machine as the real driver does: two listed, two seen.
    CliResult narrowed = run_cli("run " + source.string() + " --topology hgx-h200-8", "CUDA_VISIBLE_DEVICES=5,2");
    INFO(narrowed.output);
    CHECK(narrowed.code == 3);
    CHECK(narrowed.output.find("devices=2 ") != std::string::npos);
}

TEST_CASE("a folder builds all its .cu files into one program") {
    ScratchFolder folder;
    folder.write("answer.h", "int answer();\n");
    folder.write("answer.cu", "#include \"answer.h\"\nint answer() { return 5; }\n");
    folder.write("main.cu", "#include \"answer.h\"\nint main() { return answer(); }\n");
    CliResult result = run_cli("run " + folder.path.string());
    INFO(result.output);
    CHECK(result.code == 5);
}

TEST_CASE("a compile error names the student's file and line, with a hint, and exits 1") {
    ScratchFolder folder;
    fs::path source = folder.write("broken.cu", "int main()\n{\n    return undeclared_name;\n}\n");
    CliResult result = run_cli("run " + source.string());
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(result.output.find("broken.cu:3:") != std::string::npos);
    CHECK(result.output.find("hint: ") != std::string::npos);
    CHECK(result.output.find("did not build") != std::string::npos);
}

TEST_CASE("a file without main() is told to run its lesson or folder instead") {
    ScratchFolder folder;
    fs::path source = folder.write("part.cu", "int part_of_a_program() { return 1; }\n");
    CliResult result = run_cli("run " + source.string());
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(result.output.find("no main()") != std::string::npos);
}
