// The cu2cpp program end to end: it writes the rewritten file, rewrites local headers beside it,
// lists what it read in a depfile, reports unreadable launches as file:line errors, and its #line
// directives make the compiler's messages point at the original file and lines.
// Needs CU2CPP (the program), CXX (the C++ compiler command) and SIM_INCLUDE in the environment.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    REQUIRE_MESSAGE(value != nullptr, name << " must be set (meson test sets it)");
    return value;
}

struct Folder {
    fs::path path;
    Folder() {
        char pattern[] = "/tmp/cu2cpp-cli-XXXXXX";
        path = ::mkdtemp(pattern);
    }
    ~Folder() { fs::remove_all(path); }
    fs::path write(const std::string& name, const std::string& text) const {
        const fs::path file = path / name;
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text;
        return file;
    }
};

std::string read(const fs::path& file) {
    std::ifstream in(file);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Runs a shell command in `dir`; returns its exit status, with stderr in *errors.
int run(const fs::path& dir, const std::string& command, std::string* errors = nullptr) {
    const fs::path log = dir / "stderr.txt";
    const int status = std::system(("cd '" + dir.string() + "' && " + command + " 2> '" + log.string() + "'").c_str());
    if (errors) *errors = read(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string cu2cpp() { return std::string("'").append(env("CU2CPP")).append("'"); }

}  // namespace

TEST_CASE("compiler errors in a rewritten file point at the original file and line") {
    Folder folder;
    folder.write("bad.cu",
                 "#include <cstdio>\n"                                      // 1
                 "__global__ void k(float* x, int n) {\n"                   // 2
                 "    if (threadIdx.x < n) x[threadIdx.x] = 1.0f;\n"       // 3
                 "}\n"                                                      // 4
                 "int main() {\n"                                           // 5
                 "    float* x = nullptr;\n"                                // 6
                 "    k<<<1,\n"                                             // 7
                 "        32>>>(x,\n"                                       // 8
                 "              4);\n"                                      // 9
                 "    int wrong = \"text\";\n"                              // 10
                 "    k<<<1, 1>>>(x, \"four\");\n"                          // 11
                 "}\n");
    REQUIRE(run(folder.path, cu2cpp() + " bad.cu -o out/bad.cu.cpp") == 0);
    std::string errors;
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -fsyntax-only -I'" + env("SIM_INCLUDE") + "' out/bad.cu.cpp",
              &errors) != 0);
    CHECK(errors.find("bad.cu:10:") != std::string::npos);
    CHECK(errors.find("bad.cu:11:") != std::string::npos);
    CHECK(errors.find("bad.cu:7:") == std::string::npos);   // the multi-line launch is fine
}

TEST_CASE("a launch that cannot be read stops cu2cpp with file:line: error and status 1") {
    Folder folder;
    folder.write("unbalanced.cu", "__global__ void k() {}\nvoid f() {\n    k<<<1, 2;\n}\n");
    std::string errors;
    CHECK(run(folder.path, cu2cpp() + " unbalanced.cu -o out.cpp", &errors) == 1);
    CHECK(errors.rfind("unbalanced.cu:3: error: ", 0) == 0);
    CHECK_FALSE(fs::exists(folder.path / "out.cpp"));

    CHECK(run(folder.path, cu2cpp() + " --display-name student/k.cu unbalanced.cu -o out.cpp", &errors) == 1);
    CHECK(errors.rfind("student/k.cu:3: error: ", 0) == 0);
}

TEST_CASE("local headers are rewritten beside the output and listed in the depfile") {
    Folder folder;
    folder.write("src/kernels/launch.cuh",
                 "#pragma once\n#include \"../common.h\"\n"
                 "__global__ void fill(int* p) { p[threadIdx.x] = VALUE; }\n"
                 "inline void run_fill(int* p) { fill<<<1, 4>>>(p); }\n");
    folder.write("src/common.h", "#pragma once\n#define VALUE 7\n");
    folder.write("src/main.cu",
                 "#include \"kernels/launch.cuh\"\n#include \"common.h\"\n#include <cstdio>\nint main() { return 0; }\n");
    REQUIRE(run(folder.path, cu2cpp() + " src/main.cu build/main.cu.cpp --depfile build/main.d") == 0);

    const std::string main_text = read(folder.path / "build/main.cu.cpp");
    const fs::path headers = fs::absolute(folder.path / "build/main.cu.cpp.headers");
    CHECK(main_text.find("#line 1 \"src/main.cu\"") != std::string::npos);
    CHECK(main_text.find("#include \"" + (headers / "1_launch.cuh").string() + "\"") != std::string::npos);
    const std::string header_text = read(headers / "1_launch.cuh");
    CHECK(header_text.rfind("#line 1 \"src/kernels/launch.cuh\"\n", 0) == 0);
    CHECK(header_text.find("KernelLauncher< fill >") != std::string::npos);
    // A header with nothing to rewrite is included from where it is, from the copy and the main file alike.
    const std::string common = (fs::absolute(folder.path) / "src/common.h").string();
    CHECK(header_text.find("#include \"" + common + "\"") != std::string::npos);
    CHECK(main_text.find("#include \"" + common + "\"") != std::string::npos);
    CHECK_FALSE(fs::exists(headers / "2_common.h"));
    CHECK(read(folder.path / "build/main.d") ==
          "build/main.cu.cpp: src/main.cu src/kernels/launch.cuh src/common.h\n");

    std::string errors;
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -fsyntax-only -I'" + env("SIM_INCLUDE") + "' build/main.cu.cpp",
              &errors) == 0);
    CHECK(errors.empty());
}

TEST_CASE("a device variable declared in a header is rewritten where the including file uses it") {
    Folder folder;
    folder.write("src/table.cuh", "#pragma once\n__constant__ float table[4] = {1, 2, 3, 4};\n");
    folder.write("src/uses.h", "#pragma once\ninline float first_entry_size() { return sizeof(table[0]); }\n");
    folder.write("src/main.cu",
                 "#include \"table.cuh\"\n#include \"uses.h\"\n"
                 "__global__ void k(float* out) { out[threadIdx.x] = table[threadIdx.x]; }\n"
                 "int main() { float h[4] = {}; return cudaMemcpyToSymbol(table, h, sizeof table) == cudaSuccess ? 0 : 1; }\n");
    REQUIRE(run(folder.path, cu2cpp() + " src/main.cu build/main.cu.cpp") == 0);
    const fs::path headers = fs::absolute(folder.path / "build/main.cu.cpp.headers");
    CHECK(read(headers / "1_table.cuh").find("mgpu_symbol_table{\"table\"") != std::string::npos);
    CHECK(read(headers / "2_uses.h").find("sizeof(mgpu_symbol_table.get()[0])") != std::string::npos);
    const std::string main_text = read(folder.path / "build/main.cu.cpp");
    CHECK(main_text.find("out[threadIdx.x] = mgpu_symbol_table.get()[threadIdx.x];") != std::string::npos);
    CHECK(main_text.find("cudaMemcpyToSymbol(mgpu_symbol_table.get(), h, sizeof mgpu_symbol_table.get())") !=
          std::string::npos);

    std::string errors;
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -fsyntax-only -I'" + env("SIM_INCLUDE") + "' build/main.cu.cpp",
              &errors) == 0);
    CHECK(errors.empty());
}

TEST_CASE("--help explains the limits; a missing output is a usage error") {
    Folder folder;
    CHECK(run(folder.path, cu2cpp() + " --help > help.txt") == 0);
    CHECK(read(folder.path / "help.txt").find("Limits:") != std::string::npos);
    std::string errors;
    CHECK(run(folder.path, cu2cpp() + " only-input.cu", &errors) == 2);
    CHECK(errors.find("no output file") != std::string::npos);
}

TEST_CASE("a runtime call the simulated machine lacks fails to compile with a message naming it") {
    Folder folder;
    folder.write("graph.cu",
                 "#include <cuda_runtime.h>\n"
                 "__global__ void step(float* x) { x[threadIdx.x] += 1; }\n"
                 "int main() {\n"
                 "    cudaStream_t s;\n"
                 "    cudaStreamCreate(&s);\n"
                 "    cudaGraph_t graph;\n"
                 "    cudaGraphExec_t exec;\n"
                 "    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);\n"
                 "    cudaStreamEndCapture(s, &graph);\n"
                 "    cudaGraphInstantiate(&exec, graph, 0);\n"
                 "    float* p;\n"
                 "    cudaMallocAsync(&p, 64, s);\n"
                 "    return cudaGraphLaunch(exec, s);\n"
                 "}\n");
    REQUIRE(run(folder.path, cu2cpp() + " graph.cu -o graph.cu.cpp") == 0);
    std::string errors;
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -c -o graph.o -I'" + env("SIM_INCLUDE") + "' graph.cu.cpp",
              &errors) != 0);
    for (const char* call : {"cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaGraphInstantiate", "cudaMallocAsync",
                             "cudaGraphLaunch"}) {
        CAPTURE(call);
        CHECK(errors.find(std::string(call) + " is not supported by the simulated machine") != std::string::npos);
    }
    // The message points at the student's line.
    CHECK(errors.find("graph.cu:13") != std::string::npos);
}

TEST_CASE("__CUDACC__ and nvcc's version macros are defined in .cu files only, as nvcc and g++ define them") {
    Folder folder;
    folder.write("kernel.cu",
                 "#if !defined(__CUDACC__) || !defined(__NVCC__) || __CUDACC_VER_MAJOR__ != 13 || __CUDACC_VER_MINOR__ != 0\n"
                 "#error nvcc 13.0 defines __CUDACC__, __NVCC__ and its version for every .cu file\n"
                 "#endif\n"
                 "#if defined(__CUDA_ARCH__)\n"
                 "#error host code is compiled without __CUDA_ARCH__\n"
                 "#endif\n"
                 "int main() { return 0; }\n");
    folder.write("host.cpp",
                 "#include <cuda_runtime.h>\n"
                 "#if defined(__CUDACC__) || defined(__NVCC__)\n"
                 "#error a .cpp compiled by the host compiler never sees __CUDACC__, even with cuda_runtime.h\n"
                 "#endif\n"
                 "#if !defined(__CUDA_RUNTIME_H__) || !defined(__CUDA_RUNTIME_API_H__) || !defined(__DRIVER_TYPES_H__)\n"
                 "#error cuda_runtime.h defines the include guards cuda-samples test\n"
                 "#endif\n"
                 "#if CUDART_VERSION != 13000 || defined(CUDA_VERSION)\n"
                 "#error CUDA 13.0: CUDART_VERSION is 13000, CUDA_VERSION comes only with the driver API header cuda.h\n"
                 "#endif\n"
                 "int main() { return 0; }\n");
    REQUIRE(run(folder.path, cu2cpp() + " kernel.cu -o kernel.cu.cpp") == 0);
    std::string errors;
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -fsyntax-only -I'" + env("SIM_INCLUDE") + "' kernel.cu.cpp",
              &errors) == 0);
    CHECK(errors == "");
    CHECK(run(folder.path, env("CXX") + " -std=c++20 -fsyntax-only -I'" + env("SIM_INCLUDE") + "' host.cpp", &errors) ==
          0);
    CHECK(errors == "");
}
