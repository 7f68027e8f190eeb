// The rewriting of g++'s messages on its own, on output captured from g++ 12 against the
// simulator's headers (paths shortened to /kit): the end-to-end cases are in
// tools/cli/tests/compile_messages_test.cpp.
#include <doctest/doctest.h>

#include "api_signatures.h"
#include "compiler_messages.h"
#include "message_text.h"
#include "source_columns.h"

using namespace mgpu::messages;

TEST_CASE("a column on a rewritten launch line maps back where the line is unchanged") {
    const std::string original = "    scale<<<1, 32>>>(p, q, 4);";
    const std::string rewritten =
        "    ::mgpu::sim::KernelLauncher< scale >::launch(\"scale\", ::mgpu::sim::Site{__FILE__, 6}, "
        "::mgpu::sim::LaunchConfig(1, 32), p, q, 4);";
    CHECK(original_column(original, rewritten, 3) == 3);
    const int q_rewritten = static_cast<int>(rewritten.find("q, 4")) + 1;
    CHECK(original_column(original, rewritten, q_rewritten) == static_cast<int>(original.find("q, 4")) + 1);
    CHECK_FALSE(original_column(original, rewritten, 20).has_value());
    CHECK(original_column("same", "same", 2) == 2);
}

TEST_CASE("the hidden call-site parameter leaves signatures and argument counts") {
    CHECK(without_simulator_names("too few arguments to function 'cudaError_t cudaSetDevice(int, mgpu::sim::Site)'").text ==
          "too few arguments to function 'cudaError_t cudaSetDevice(int)'");
    CHECK(without_simulator_names("candidate: 'cudaError_t cudaDeviceSynchronize(mgpu::sim::Site)'").text ==
          "candidate: 'cudaError_t cudaDeviceSynchronize()'");
    const auto candidate = without_simulator_names("candidate: 'cudaError_t cudaFree(void*, mgpu::sim::Site)'");
    CHECK(without_simulator_names("  candidate expects 2 arguments, 0 provided", candidate.hidden_before, candidate.hidden_after).text ==
          "  candidate expects 1 argument, 0 provided");
}

TEST_CASE("a launch reads as a call of the kernel") {
    const auto note = without_simulator_names(
        "  initializing argument 4 of 'static void mgpu::sim::KernelLauncher<Kernel, PerThreadDefaultStream>::launch(const "
        "char*, mgpu::sim::Site, const mgpu::sim::LaunchConfig&, Params ...) [with Params = {float*, const float*, int}; "
        "void (* Kernel)(Params ...) = scale; bool PerThreadDefaultStream = false]'");
    CHECK(note.text == "  initializing argument 1 of 'void scale(float*, const float*, int)'");
    CHECK(without_simulator_names("no matching function for call to 'mgpu::sim::KernelLauncher<scale>::launch(const char [6], "
                                  "mgpu::sim::Site, mgpu::sim::LaunchConfig, int*&, int)'")
              .text == "no matching function for call to 'scale(int*&, int)'");
    CHECK(without_simulator_names("'mgpu_symbol_counter' was not declared").text == "'counter' was not declared");
}

TEST_CASE("the API's signatures are read from the simulator's headers as CUDA declares them") {
    const auto signatures = api_signatures(MGPU_TEST_SIM_INCLUDE);
    CHECK(signatures.at("cudaSetDevice") == "cudaError_t cudaSetDevice(int)");
    CHECK(signatures.at("cudaMemcpy") == "cudaError_t cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind)");
    CHECK(signatures.at("cudaDeviceCanAccessPeer") == "cudaError_t cudaDeviceCanAccessPeer(int*, int, int)");
    CHECK(signatures.at("cudaGetErrorString") == "const char* cudaGetErrorString(cudaError_t)");
    CHECK(signatures.at("__syncthreads") == "void __syncthreads()");
    CHECK(signatures.at("__syncthreads_count") == "int __syncthreads_count(int)");
    CHECK(signatures.at("cudaStreamWaitEvent") == "cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int)");
}

TEST_CASE("notes and include chains into the simulator's headers go; the student's lines stay") {
    CompileContext context;
    context.internal_folders = {"/kit/tools/sim/include"};
    context.api_headers = "/kit/tools/sim/include";
    const std::string output =
        "m.cu: In function 'int main()':\n"
        "m.cu:13:28: error: too few arguments to function 'cudaError_t cudaDeviceCanAccessPeer(int*, int, int, mgpu::sim::Site)'\n"
        "   13 |     cudaDeviceCanAccessPeer(1, 2);\n"
        "      |     ~~~~~~~~~~~~~~~~~~~~~~~^~~~~~\n"
        "In file included from /kit/tools/sim/include/cuda_runtime.h:9,\n"
        "                 from <command-line>:\n"
        "/kit/tools/sim/include/cuda_runtime_api.h:87:13: note: declared here\n"
        "   87 | cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice, MGPU_SITE);\n"
        "      |             ^~~~~~~~~~~~~~~~~~~~~~~\n"
        "/kit/tools/sim/include/cuda_runtime_api.h:49:13: note: candidate: 'cudaError_t cudaMalloc(void**, size_t, mgpu::sim::Site)'\n"
        "   49 | cudaError_t cudaMalloc(void** devPtr, size_t size, MGPU_SITE);\n";
    const std::string shown = nvcc_style_messages(output, context);
    CHECK(shown ==
          "m.cu: In function 'int main()':\n"
          "m.cu:13:28: error: too few arguments to function 'cudaError_t cudaDeviceCanAccessPeer(int*, int, int)'\n"
          "   13 |     cudaDeviceCanAccessPeer(1, 2);\n"
          "      |     ~~~~~~~~~~~~~~~~~~~~~~~^~~~~~\n"
          "cuda_runtime_api.h: note: candidate: 'cudaError_t cudaMalloc(void**, size_t)'\n");
}
