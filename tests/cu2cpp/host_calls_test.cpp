// host_device_calls.cpp: a call of a __device__ function from host code is refused at its line, as
// nvcc refuses it; device code, __host__ __device__ functions, extended lambdas, members and
// overloads with a host version are not.
#include <doctest/doctest.h>

#include <string>

#include "rewriter.h"
#include "source_tokens.h"

namespace {

// The error cu2cpp gives for `source`, or "" when it accepts it.
std::string refusal(const std::string& source) {
    const std::vector<cu2cpp::Token> tokens = cu2cpp::tokenize(source);
    cu2cpp::FunctionSides sides;
    cu2cpp::collect_function_sides(tokens, sides);
    try {
        cu2cpp::check_host_calls(tokens, sides, "x.cu");
    } catch (const cu2cpp::RewriteError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a __device__ function called from main is refused at the call's line") {
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "int main() {\n"
                  "  return sq(2.0f) > 0;\n"
                  "}\n") == "x.cu:3: error: calling a __device__ function(\"sq(float)\") from a __host__ function(\"main\") is not allowed");
}

TEST_CASE("a prototype marks the function as device-only, and so do CUDA's own device functions") {
    CHECK(refusal("__device__ float sq(float);\nvoid f(float* p) { sq(*p); }\n").find("\"sq(float)\") from a __host__ function(\"f\")") !=
          std::string::npos);
    CHECK(refusal("void f() {\n  __syncthreads();\n}\n").find("x.cu:2: error: calling a __device__ function(\"__syncthreads\")") !=
          std::string::npos);
    CHECK(refusal("void f(float* p) { atomicAdd(p, 1.0f); }\n").find("atomicAdd") != std::string::npos);
}

TEST_CASE("device code, __host__ __device__ functions, device lambdas, members and host overloads are accepted") {
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "__global__ void k(float* p) { p[0] = sq(p[0]); atomicAdd(p, 1.0f); __syncthreads(); }\n"
                  "__device__ float quad(float x) { return sq(sq(x)); }\n") == "");
    CHECK(refusal("__host__ __device__ float twice(float x) { return 2 * x; }\n"
                  "int main() { return twice(1.0f) > 0; }\n") == "");
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "int main() { auto f = [] __device__ (float v) { return sq(v); }; (void)f; return 0; }\n") == "");
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "struct S { float sq(float x) const { return x; } };\n"
                  "int main() { S s; return s.sq(1.0f) > 0; }\n") == "");
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "float sq(int x) { return float(x * x); }\n"
                  "int main() { return sq(2) > 0; }\n") == "");
    CHECK(refusal("__device__ float sq(float x) { return x * x; }\n"
                  "int main() { /* sq(1.0f) */ const char* t = \"sq(2)\"; return t != nullptr; }\n") == "");
}
