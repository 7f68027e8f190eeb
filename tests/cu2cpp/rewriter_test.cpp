// The rewriter on source text: what each launch, shared-memory declaration and include becomes,
// what must stay as it is, and the errors for launches it cannot read. Expected texts are
// written out by hand from the rewriting rules in tools/cu2cpp/rewriter.h.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "rewriter.h"

namespace {

const std::string kLaunch = "::mgpu::sim::KernelLauncher< ";
const std::string kShared = "::mgpu::sim::kernel::dynamic_shared_memory";

// The rewritten text after the leading #line.
std::string rewrite(const std::string& source, std::set<std::string> kernel_templates = {},
                    std::set<std::string> kernels_with_default_arguments = {}) {
    cu2cpp::FileRewrite how;
    how.display_name = "t.cu";
    how.main_file = false;
    how.kernel_templates = std::move(kernel_templates);
    how.kernels_with_default_arguments = std::move(kernels_with_default_arguments);
    const std::string out = cu2cpp::rewrite_source(source, how);
    const std::string first_line = "#line 1 \"t.cu\"\n";
    REQUIRE(out.substr(0, first_line.size()) == first_line);
    return out.substr(first_line.size());
}

std::string error_of(const std::string& source) {
    try {
        rewrite(source);
    } catch (const cu2cpp::RewriteError& error) {
        return error.what();
    }
    return "(no error)";
}

std::string site(int line) { return "::mgpu::sim::Site{__FILE__, " + std::to_string(line) + "}"; }

}  // namespace

TEST_CASE("a launch becomes a call of the launch template with the name, site, configuration and arguments") {
    CHECK(rewrite("k<<<g, b>>>(x, n);") ==
          kLaunch + "k >::launch(\"k\", " + site(1) + ", ::mgpu::sim::LaunchConfig(g, b), x, n);");
    CHECK(rewrite("  go<<<1, 2, 64, stream>>>();") ==
          "  " + kLaunch + "go >::launch(\"go\", " + site(1) + ", ::mgpu::sim::LaunchConfig(1, 2, 64, stream));");
}

TEST_CASE("template ids, qualified names and configurations with nested brackets and shifts") {
    CHECK(rewrite("k<A<int>, 4><<<dim3(n >> 1, 2), std::max<int>(a, (b)), sizeof(T) * 2, s>>>(f(x), g<int>(y));") ==
          kLaunch + "k<A<int>, 4> >::launch(\"k<A<int>, 4>\", " + site(1) +
              ", ::mgpu::sim::LaunchConfig(dim3(n >> 1, 2), std::max<int>(a, (b)), sizeof(T) * 2, s), f(x), g<int>(y));");
    CHECK(rewrite("::ns::inner::k<<<1, 1>>>();") ==
          kLaunch + "::ns::inner::k >::launch(\"::ns::inner::k\", " + site(1) + ", ::mgpu::sim::LaunchConfig(1, 1));");
    CHECK(rewrite("ns::template k<T><<<p->grid, p->block>>>(p);") ==
          kLaunch + "ns::template k<T> >::launch(\"ns::template k<T>\", " + site(1) +
              ", ::mgpu::sim::LaunchConfig(p->grid, p->block), p);");
    // In a run of more than three '>', the last three close the configuration.
    CHECK(rewrite("k<<<a, T<b>>>>(x);") ==
          kLaunch + "k >::launch(\"k\", " + site(1) + ", ::mgpu::sim::LaunchConfig(a, T<b>), x);");
}

TEST_CASE("spacing and comments inside a launch stay where they were") {
    CHECK(rewrite("k <<< 1, 2 >>> ( x );") ==
          kLaunch + "k >::launch(\"k\", " + site(1) + ",  ::mgpu::sim::LaunchConfig( 1, 2 ) ,  x );");
    CHECK(rewrite("k<<<1 /* blocks */, 2>>>(x /* data */);") ==
          kLaunch + "k >::launch(\"k\", " + site(1) + ", ::mgpu::sim::LaunchConfig(1 /* blocks */, 2), x /* data */);");
}

TEST_CASE("a launch over several lines keeps every line break, and its site is the kernel name's line") {
    const std::string source = "int a;\nk<<<grid,\n    block>>>(x,\n             y);\nint b;\n";
    const std::string expected = "int a;\n" + kLaunch + "k >::launch(\"k\", " + site(2) +
                                 ", ::mgpu::sim::LaunchConfig(grid,\n    block), x,\n             y);\nint b;\n";
    CHECK(rewrite(source) == expected);
}

TEST_CASE("<<< inside comments, strings, character literals and raw strings is left alone") {
    const std::string source =
        "// a<<<b>>>(c)\n"
        "/* k<<<1,1>>>() */ const char* s = \"k<<<1,1>>>()\";\n"
        "char c = '<'; char d = '\\'';\n"
        "auto r = R\"x(k<<<1,1>>>() )\" still )x\";\n"
        "// continued comment \\\n"
        "k<<<1,1>>>(x);\n"
        "int big = 1'000'000;\n";
    CHECK(rewrite(source) == source);
}

TEST_CASE("C++ that only looks like a launch is left alone") {
    const std::string source =
        "std::vector<std::vector<std::vector<int>>> v;\n"
        "friend std::ostream& operator<<<T>(std::ostream&, const V<T>&);\n"
        "x = a << b >> c;\n";
    CHECK(rewrite(source) == source);
}

TEST_CASE("a launch in a macro keeps the line continuations and takes the line where the macro is used") {
    const std::string source = "#define RUN(k, p) \\\n    k<<<1, 1>>>(p)\nRUN(f, q);\n";
    CHECK(rewrite(source) == "#define RUN(k, p) \\\n    " + kLaunch + "k >::launch(\"k\", " +
                                 "::mgpu::sim::Site{__FILE__, __LINE__}, ::mgpu::sim::LaunchConfig(1, 1), p)\nRUN(f, q);\n");
}

TEST_CASE("a kernel template launched without template arguments is called through a lambda that deduces them") {
    CHECK(rewrite("fill<<<1, 2>>>(p, 3);", {"fill"}) ==
          "::mgpu::sim::launch_deduced_kernel(\"fill\", " + site(1) +
              ", ::mgpu::sim::LaunchConfig(1, 2), [](auto&... mgpu_kernel_arguments) { "
              "fill(mgpu_kernel_arguments...); }, p, 3);");
    CHECK(rewrite("fill<int><<<1, 2>>>(p, 3);", {"fill"}) ==
          kLaunch + "fill<int> >::launch(\"fill<int>\", " + site(1) + ", ::mgpu::sim::LaunchConfig(1, 2), p, 3);");
}

TEST_CASE("kernel templates are recognised with their attributes and across lines") {
    const std::string source =
        "template <typename T> __global__ void a(T* p) {}\n"
        "template <class T, int N>\n__global__ void __launch_bounds__(256, 2) b(T* p) {}\n"
        "__global__ void c(int* p) {}\n"
        "template <> __global__ void a<int>(int* p) {}\n"
        "namespace n { template <class T> static __global__ void d(T) {} }\n";
    std::set<std::string> names;
    cu2cpp::collect_kernel_templates(cu2cpp::tokenize(source), names);
    CHECK(names == std::set<std::string>{"a", "b", "d"});
}

TEST_CASE("a kernel with default arguments is called by name through a lambda, with its address passed along") {
    CHECK(rewrite("delay<<<1, 1, 0, s>>>(flag);", {}, {"delay"}) ==
          "::mgpu::sim::launch_kernel_with_default_arguments(\"delay\", " + site(1) +
              ", &delay, ::mgpu::sim::LaunchConfig(1, 1, 0, s), "
              "[](auto&... mgpu_kernel_arguments) { delay(mgpu_kernel_arguments...); }, flag);");
    // A template among them is still deduced (a template has no single address).
    CHECK(rewrite("fill<<<1, 2>>>(p);", {"fill"}, {"fill"}).starts_with("::mgpu::sim::launch_deduced_kernel("));
}

TEST_CASE("kernels declared with a default argument are recognised; comparisons in defaults are not defaults") {
    const std::string source =
        "__global__ void delay(volatile int* flag, unsigned long long timeout_clocks = 10000000) {}\n"
        "__global__ void plain(int* p, int n) {}\n"
        "template <class T, bool B = true> __global__ void templated(T* p) {}\n"
        "__global__ void __launch_bounds__(128) bounded(int* p,\n    int n = (2 >= 1)) {}\n"
        "__global__ void array_param(int (&a)[4], int n) {}\n"
        "__global__ void declared_only(float* x, float a = 1.0f);\n";
    std::set<std::string> names;
    cu2cpp::collect_kernels_with_default_arguments(cu2cpp::tokenize(source), names);
    CHECK(names == std::set<std::string>{"bounded", "declared_only", "delay"});
}

TEST_CASE("extern __shared__ arrays become pointers to the block's dynamic shared memory") {
    CHECK(rewrite("extern __shared__ float s[];") ==
          "float* const s = reinterpret_cast<float*>(" + kShared + ");");
    CHECK(rewrite("{ extern __shared__ __align__(16) unsigned char smem[]; }") ==
          "{ unsigned char* const smem = reinterpret_cast<unsigned char*>(" + kShared + "); }");
    CHECK(rewrite("extern __shared__ alignas(8) volatile double d[ ];") ==
          "volatile double* const d = reinterpret_cast<volatile double*>(" + kShared + ");");
    CHECK(rewrite("__shared__ extern T buffer[];") == "T* const buffer = reinterpret_cast<T*>(" + kShared + ");");
    // The declaration's line breaks follow it, so the next line keeps its number.
    CHECK(rewrite("extern __shared__\n  float s[];\nint x;") ==
          "float* const s = reinterpret_cast<float*>(" + kShared + ");\n\nint x;");
}

TEST_CASE("__shared__ becomes static, and __noinline__ a GCC attribute") {
    CHECK(rewrite("__shared__ float tile[16][17];") == "static float tile[16][17];");
    CHECK(rewrite("static __shared__ int count;") == "static  int count;");
    CHECK(rewrite("__noinline__ __device__ int f();") == "__attribute__((noinline)) __device__ int f();");
}

TEST_CASE("the main file starts with the device language and a #line for the original name") {
    cu2cpp::FileRewrite how;
    how.display_name = "dir/my \"file\".cu";
    CHECK(cu2cpp::rewrite_source("int x;\n", how) ==
          "#include <mgpu/sim/nvcc_predefined.h>\n#include <mgpu/sim/device_language.h>\n#line 1 \"dir/my \\\"file\\\".cu\"\nint x;\n");
}

TEST_CASE("local includes are pointed at the paths the caller gives, others stay") {
    const std::string source = "#include \"a.cuh\"\n#include <b.h>\n// #include \"c.cuh\"\n#  include \"d.h\" // x\n";
    const auto includes = cu2cpp::find_includes(cu2cpp::tokenize(source));
    REQUIRE(includes.size() == 3);
    CHECK((includes[0].name == "a.cuh" && !includes[0].angled && includes[0].line == 1));
    CHECK((includes[1].name == "b.h" && includes[1].angled && includes[1].line == 2));
    CHECK((includes[2].name == "d.h" && !includes[2].angled && includes[2].line == 4));

    cu2cpp::FileRewrite how;
    how.display_name = "t.cu";
    how.main_file = false;
    how.include_target = [](const cu2cpp::IncludeDirective& include) -> std::optional<std::string> {
        if (include.name == "a.cuh") return "/out/1_a.cuh";
        return std::nullopt;
    };
    CHECK(cu2cpp::rewrite_source(source, how) ==
          "#line 1 \"t.cu\"\n#include \"/out/1_a.cuh\"\n#include <b.h>\n// #include \"c.cuh\"\n#  include \"d.h\" // x\n");
}

TEST_CASE("launches that cannot be read are errors that name the file and line") {
    CHECK(error_of("int a;\nk<<<1, 2;\n") ==
          "t.cu:2: error: '<<<' of the launch of 'k' has no matching '>>>': write kernel<<<blocks, threads>>>(arguments)");
    CHECK(error_of("k<<<1, 2\n\n") ==
          "t.cu:1: error: '<<<' of the launch of 'k' has no matching '>>>': write kernel<<<blocks, threads>>>(arguments)");
    CHECK(error_of("\n\nk<<<1, 1>>>;") ==
          "t.cu:3: error: expected '(' with the kernel's arguments after '>>>' in the launch of 'k'");
    CHECK(error_of("k<<<1, 1>>>(x,\n  y;\n}\n") == "t.cu:1: error: the arguments of the launch of 'k' have no closing ')'");
    CHECK(error_of("x = (<<<1, 1>>>(y));") ==
          "t.cu:1: error: '<<<' must follow the name of the kernel to launch, as in kernel<<<blocks, threads>>>(...)");
    CHECK(error_of("k<<<>>>(y);") ==
          "t.cu:1: error: the launch of 'k' needs at least a grid and a block size between '<<<' and '>>>'");
    CHECK(error_of("extern __shared__ float a[], b[];") ==
          "t.cu:1: error: cannot read this extern __shared__ declaration: write one unsized array per declaration, "
          "as in `extern __shared__ float buffer[];`");
}

namespace {

std::string symbol(const std::string& name, const std::string& constant, int line) {
    return "::mgpu::sim::DeviceSymbol<decltype(mgpu_initial_" + name + "), " + constant + "> mgpu_symbol_" + name +
           "{\"" + name + "\", &mgpu_initial_" + name + ", " + site(line) + "};";
}

}  // namespace

TEST_CASE("a __device__ or __constant__ variable becomes its initial value and a per-device symbol on the same line") {
    CHECK(rewrite("__constant__ float w[4] = {1, 2};") ==
          "__constant__ float mgpu_initial_w[4] = {1, 2}; " + symbol("w", "true", 1));
    CHECK(rewrite("static __device__ int n;") ==
          "static __device__ int mgpu_initial_n; static " + symbol("n", "false", 1));
    CHECK(rewrite("__device__ Pair<int, float> p{1, 2.0f}, q;") ==
          "__device__ Pair<int, float> mgpu_initial_p{1, 2.0f}, mgpu_initial_q; " + symbol("p", "false", 1) + " " +
              symbol("q", "false", 1));
    CHECK(rewrite("namespace a {\n__device__ __align__(16) int v[2];\n}") ==
          "namespace a {\n__device__ __align__(16) int mgpu_initial_v[2]; " + symbol("v", "false", 2) + "\n}");
    CHECK(rewrite("extern __device__ int counter;") ==
          "extern __device__ int mgpu_initial_counter; extern ::mgpu::sim::DeviceSymbol<decltype(mgpu_initial_counter), "
          "false> mgpu_symbol_counter;");
}

TEST_CASE("uses of a device variable reach the copy of the running device; other names stay") {
    CHECK(rewrite("__device__ int n;\n__global__ void k(int* o) { o[0] = n + ns::n; atomicAdd(&n, 1); }") ==
          "__device__ int mgpu_initial_n; " + symbol("n", "false", 1) +
              "\n__global__ void k(int* o) { o[0] = mgpu_symbol_n.get() + ns::mgpu_symbol_n.get(); "
              "atomicAdd(&mgpu_symbol_n.get(), 1); }");
    // Members, parameters and locals of the same name are other variables.
    CHECK(rewrite("__device__ int n;\nstruct S { int n; };\nvoid f(S s, S* p) { s.n = p->n; }\n"
                  "void g(int n) { n++; }\nvoid h() { for (int n = 0; n < 2; ++n) {} n = 1; }") ==
          "__device__ int mgpu_initial_n; " + symbol("n", "false", 1) +
              "\nstruct S { int n; };\nvoid f(S s, S* p) { s.n = p->n; }\n"
              "void g(int n) { n++; }\nvoid h() { for (int n = 0; n < 2; ++n) {} mgpu_symbol_n.get() = 1; }");
    // Functions, constexpr variables and declarations inside functions are not device variables.
    CHECK(rewrite("__device__ int f(int x) { return x; }") == "__device__ int f(int x) { return x; }");
    CHECK(rewrite("constexpr __device__ int k = 3;") == "constexpr __device__ int k = 3;");
    CHECK(rewrite("__host__ __device__ float g();") == "__host__ __device__ float g();");
    CHECK(rewrite("auto f = [] __device__ (int x) { return x; };") == "auto f = [] __device__ (int x) { return x; };");
}
