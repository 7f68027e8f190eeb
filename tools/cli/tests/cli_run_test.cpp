// End to end: `run` builds small CUDA programs against the simulator and runs them. These need
// the launch rewriter and the simulator's runtime, so they form a test program of their own.
#include <algorithm>
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <unistd.h>

#include "cli_invocation.h"

namespace fs = std::filesystem;

namespace {

std::string read_page(const fs::path& page) {
    std::ifstream in(page);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t found = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++found;
    return found;
}

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

TEST_CASE("files named one by one build into one program, with -I folders, -D macros and plain C++ files") {
    // The layout of NVIDIA's samples: the program's folder, a shared include folder elsewhere, a
    // kernel launched from a header found only through -I, a host-only .cpp file that includes
    // cuda_runtime.h itself, and a macro given on the command line.
    ScratchFolder folder;
    fs::create_directories(folder.path / "common");
    fs::create_directories(folder.path / "program");
    folder.write("common/helper.cuh", R"(#pragma once
__global__ void add_scale(int* values)
{
    values[threadIdx.x] += SCALE;
}
inline void add_scale_on_device(int* values, int n) { add_scale<<<1, n>>>(values, ); }
)");
    // The launch above lacks an argument on purpose: it is fixed below so that the first build
    // fails inside the -I header, at its own line.
    fs::path main_file = folder.write("program/main.cu", R"(#include <cstdio>
#include <helper.cuh>
int sum_on_host(const int* values, int n);
int main()
{
    int* values = nullptr;
    cudaMalloc(&values, 4 * sizeof(int));
    cudaMemset(values, 0, 4 * sizeof(int));
    add_scale_on_device(values, 4);
    int host[4];
    cudaMemcpy(host, values, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(values);
    std::printf("sum=%d\n", sum_on_host(host, 4));
    return 0;
}
)");
    fs::path host_file = folder.write("program/sum.cpp", R"(#include <cuda_runtime.h>
int sum_on_host(const int* values, int n)
{
    int device = -1;
    cudaGetDevice(&device);
    int sum = device;
    for (int i = 0; i < n; ++i) sum += values[i];
    return sum;
}
)");
    const std::string command = "run " + main_file.string() + " " + host_file.string() + " -I " +
                                (folder.path / "common").string() + " -DSCALE=7";
    CliResult broken = run_cli(command);
    INFO(broken.output);
    CHECK(broken.code == 1);
    CHECK(broken.output.find("helper.cuh:6") != std::string::npos);

    folder.write("common/helper.cuh", R"(#pragma once
__global__ void add_scale(int* values)
{
    values[threadIdx.x] += SCALE;
}
inline void add_scale_on_device(int* values, int n) { add_scale<<<1, n>>>(values); }
)");
    CliResult built = run_cli(command);
    INFO(built.output);
    CHECK(built.code == 0);
    CHECK(built.output.find("sum=28") != std::string::npos);

    CliResult other_macro = run_cli("run " + main_file.string() + " " + host_file.string() + " -I" +
                                    (folder.path / "common").string() + " -D SCALE=1");
    INFO(other_macro.output);
    CHECK(other_macro.output.find("sum=4") != std::string::npos);

    CliResult twice = run_cli("run " + main_file.string() + " " + main_file.string());
    CHECK(twice.code == 2);
    CHECK(twice.output.find("named twice") != std::string::npos);
    CliResult missing_folder = run_cli("run " + main_file.string() + " -I " + (folder.path / "nowhere").string());
    CHECK(missing_folder.code == 2);
    CHECK(missing_folder.output.find("no such folder") != std::string::npos);
}

TEST_CASE("a kernel that waits at __syncthreads runs, and the program ends normally") {
    // A block-wise sum in shared memory: threads wait at barriers, so the block runs on fibers, which
    // are taken down when the program exits.
    ScratchFolder folder;
    fs::path source = folder.write("block_sum.cu", R"(#include <cstdio>
__global__ void block_sum(int* out)
{
    __shared__ int cache[64];
    cache[threadIdx.x] = static_cast<int>(threadIdx.x);
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (static_cast<int>(threadIdx.x) < half) cache[threadIdx.x] += cache[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = cache[0];
}
int main()
{
    int* out = nullptr;
    cudaMalloc(&out, 2 * sizeof(int));
    block_sum<<<2, 64>>>(out);
    int host[2] = {0, 0};
    cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost);
    cudaFree(out);
    std::printf("sums=%d,%d\n", host[0], host[1]);
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string());
    INFO(result.output);
    CHECK(result.code == 0);
    CHECK(result.output.find("sums=2016,2016") != std::string::npos);
}

// A host timer around a synchronous 64 MiB copy from pinned memory reads the modelled machine's
// time (64 MiB at 55.3 GB/s: 1213.6 us and the copy's fixed costs) through every clock a program
// may use, not the time the simulator took to move the bytes.
TEST_CASE("under run, the program's own timers read the modelled time of its CUDA calls") {
    ScratchFolder folder;
    fs::path source = folder.write("timed.cu", R"(#include <chrono>
#include <cstdio>
#include <ctime>
#include <omp.h>
#include <sys/time.h>

int main()
{
    const size_t bytes = size_t{64} << 20;
    void *host = nullptr, *device = nullptr;
    cudaMallocHost(&host, bytes);
    cudaMalloc(&device, bytes);
    timeval before{}, after{};
    timespec raw_before{}, raw_after{};
    gettimeofday(&before, nullptr);
    clock_gettime(CLOCK_MONOTONIC, &raw_before);
    const auto start = std::chrono::steady_clock::now();
    const auto wall_start = std::chrono::system_clock::now();
    const double omp_start = omp_get_wtime();
    cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
    const double omp_end = omp_get_wtime();
    const auto wall_end = std::chrono::system_clock::now();
    const auto stop = std::chrono::steady_clock::now();
    clock_gettime(CLOCK_MONOTONIC, &raw_after);
    gettimeofday(&after, nullptr);
    std::printf("steady %.1f\n", std::chrono::duration<double, std::micro>(stop - start).count());
    std::printf("system %.1f\n", std::chrono::duration<double, std::micro>(wall_end - wall_start).count());
    std::printf("omp %.1f\n", (omp_end - omp_start) * 1e6);
    std::printf("monotonic %.1f\n", (raw_after.tv_sec - raw_before.tv_sec) * 1e6 + (raw_after.tv_nsec - raw_before.tv_nsec) / 1e3);
    std::printf("timeofday %.1f\n", (after.tv_sec - before.tv_sec) * 1e6 + double(after.tv_usec - before.tv_usec));
    cudaFree(device);
    cudaFreeHost(host);
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string() + " --topology h200");
    INFO(result.output);
    REQUIRE(result.code == 0);
    const double modelled_copy_us = 64.0 * 1024 * 1024 / (55.3 * 1e3);
    const std::string lines = "\n" + result.output;
    for (const char* clock : {"steady ", "system ", "omp ", "monotonic ", "timeofday "}) {
        CAPTURE(clock);
        const auto at = lines.find(std::string("\n") + clock);
        REQUIRE(at != std::string::npos);
        const double us = std::stod(lines.substr(at + 1 + std::string(clock).size()));
        // At least the modelled copy; the real time the program's own code took between its calls
        // is added, which is microseconds, and a second even on a machine that deschedules it.
        CHECK(us >= modelled_copy_us);
        CHECK(us < modelled_copy_us + 1e6);
    }
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

// What the simulator saw is listed after the program's output, at the lines that caused it. A
// program that is not an exercise keeps its exit code, as on a real GPU, unless --fail-on-findings.
TEST_CASE("run reports a data race between two streams at the lines of both operations") {
    ScratchFolder folder;
    fs::path source = folder.write("race.cu", R"(#include <cstdio>

__global__ void twice(float* out, const float* in, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) out[i] = 2 * in[i];
}

int main()
{
    const size_t n = 1 << 22;
    float *host = nullptr, *in = nullptr, *out = nullptr;
    cudaMallocHost(&host, n * sizeof(float));
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaStream_t copies, kernels;
    cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&kernels, cudaStreamNonBlocking);
    cudaMemcpyAsync(in, host, n * sizeof(float), cudaMemcpyHostToDevice, copies);
    twice<<<1024, 256, 0, kernels>>>(out, in, n);
    cudaDeviceSynchronize();
    cudaStreamDestroy(copies);
    cudaStreamDestroy(kernels);
    cudaFree(in);
    cudaFree(out);
    cudaFreeHost(host);
    std::printf("done\n");
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string() + " --fail-on-findings");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(result.output.find("done") != std::string::npos);
    CHECK(result.output.find("race") != std::string::npos);
    CHECK(result.output.find("kernel twice at " + source.string() + ":19") != std::string::npos);
    CHECK(result.output.find("cudaMemcpyAsync at " + source.string() + ":18") != std::string::npos);
    CHECK(result.output.find("cudaStreamWaitEvent") != std::string::npos);
    CHECK(result.output.find("leak") == std::string::npos);

    // By default a program that is not an exercise keeps its own exit code; the race is still reported.
    CliResult kept = run_cli("run " + source.string());
    INFO(kept.output);
    CHECK(kept.code == 0);
    CHECK(kept.output.find("race") != std::string::npos);
    CHECK(kept.output.find("--fail-on-findings") != std::string::npos);

    // Ordered by an event, the same program is clean and its exit code passes through.
    std::string ordered = R"(cudaMemcpyAsync(in, host, n * sizeof(float), cudaMemcpyHostToDevice, copies);
    cudaEvent_t arrived;
    cudaEventCreateWithFlags(&arrived, cudaEventDisableTiming);
    cudaEventRecord(arrived, copies);
    cudaStreamWaitEvent(kernels, arrived, 0);
    cudaEventDestroy(arrived);)";
    std::string text;
    {
        std::ifstream in(source);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    const std::string racy = "cudaMemcpyAsync(in, host, n * sizeof(float), cudaMemcpyHostToDevice, copies);";
    text.replace(text.find(racy), racy.size(), ordered);
    fs::path fixed = folder.write("ordered.cu", text);
    CliResult clean = run_cli("run " + fixed.string());
    INFO(clean.output);
    CHECK(clean.code == 0);
    CHECK(clean.output.find("problem") == std::string::npos);
}

TEST_CASE("work that host threads order by a join, a condition variable or a future is never reported as racing") {
    // A worker copies a host buffer to device 0 and back; once the main thread knows it is done, it
    // copies the same buffer to device 1. Whatever told it so ordered the copies.
    ScratchFolder folder;
    fs::path source = folder.write("handed_over.cu", R"(#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

int main(int argc, char** argv)
{
    const char* how = argc > 1 ? argv[1] : "join";
    const size_t n = 64 << 20;
    std::vector<char> host(n, 1);
    void *on_0 = nullptr, *on_1 = nullptr;
    cudaSetDevice(0);
    cudaMalloc(&on_0, n);
    cudaSetDevice(1);
    cudaMalloc(&on_1, n);
    auto round_trip = [&] {
        cudaSetDevice(0);
        cudaMemcpy(on_0, host.data(), n, cudaMemcpyHostToDevice);
        cudaMemcpy(host.data(), on_0, n, cudaMemcpyDeviceToHost);
    };
    std::thread worker;
    if (std::strcmp(how, "join") == 0) {
        std::thread(round_trip).join();
    } else if (std::strcmp(how, "condvar") == 0) {
        std::mutex mutex;
        std::condition_variable done;
        bool finished = false;
        worker = std::thread([&] {
            round_trip();
            { std::lock_guard<std::mutex> lock(mutex); finished = true; }
            done.notify_one();
        });
        std::unique_lock<std::mutex> lock(mutex);
        done.wait(lock, [&] { return finished; });
    } else {
        std::async(std::launch::async, round_trip).get();
    }
    cudaSetDevice(1);
    cudaMemcpy(on_1, host.data(), n, cudaMemcpyHostToDevice);
    if (worker.joinable()) worker.join();
    cudaFree(on_1);
    cudaSetDevice(0);
    cudaFree(on_0);
    std::printf("copied after %s\n", how);
    return 0;
}
)");
    for (const char* how : {"join", "condvar", "future"}) {
        CAPTURE(how);
        CliResult result = run_cli("run " + source.string() + " --topology hgx-h200-8 --fail-on-findings -- " + how);
        INFO(result.output);
        CHECK(result.code == 0);
        CHECK(result.output.find(std::string("copied after ") + how) != std::string::npos);
        CHECK(result.output.find("race") == std::string::npos);
    }
}

TEST_CASE("an OpenMP program's own timer reads the same time in every run, whatever OMP_WAIT_POLICY says") {
    // Eight threads, one per GPU, each with 4 copies, a barrier and one more copy. The time the
    // threads spend waiting for each other is the simulator running the others, not theirs.
    ScratchFolder folder;
    fs::path source = folder.write("omp_timed.cu", R"(#include <cstdio>
#include <omp.h>
#include <vector>

int main()
{
    int count = 0;
    cudaGetDeviceCount(&count);
    const size_t bytes = 32 << 20;
    std::vector<void*> device(count), host(count);
    for (int d = 0; d < count; ++d) {
        cudaSetDevice(d);
        cudaMalloc(&device[d], bytes);
        cudaMallocHost(&host[d], bytes);
    }
    const double start = omp_get_wtime();
    for (int round = 0; round < 3; ++round) {
#pragma omp parallel num_threads(count)
        {
            const int d = omp_get_thread_num();
            cudaSetDevice(d);
            for (int k = 0; k < 4; ++k) cudaMemcpy(device[d], host[d], bytes, cudaMemcpyHostToDevice);
#pragma omp barrier
            cudaMemcpy(host[d], device[d], bytes, cudaMemcpyDeviceToHost);
        }
    }
    std::printf("seconds %.6f\n", omp_get_wtime() - start);
    for (int d = 0; d < count; ++d) {
        cudaSetDevice(d);
        cudaFree(device[d]);
        cudaFreeHost(host[d]);
    }
    return 0;
}
)");
    std::vector<double> seconds;
    for (const char* policy : {"active", "passive"}) {
        for (int run = 0; run < 5; ++run) {
            CliResult result = run_cli("run " + source.string() + " --topology hgx-h200-8",
                                       std::string("OMP_WAIT_POLICY=") + policy);
            INFO(result.output);
            REQUIRE(result.code == 0);
            const auto at = result.output.find("seconds ");
            REQUIRE(at != std::string::npos);
            seconds.push_back(std::stod(result.output.substr(at + 8)));
        }
    }
    const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
    CAPTURE(*low);
    CAPTURE(*high);
    // 15 copies of 32 MiB a thread over host links: milliseconds of modelled time.
    CHECK(*low > 0.002);
    CHECK(*high <= *low * 1.05);
}

TEST_CASE("run reports streams, events and memory never released, once per line that leaked") {
    ScratchFolder folder;
    fs::path source = folder.write("leak.cu", R"(#include <cstdio>

int main()
{
    for (int i = 0; i < 3; ++i) {
        cudaStream_t stream;
        cudaStreamCreate(&stream);
    }
    cudaEvent_t event;
    cudaEventCreate(&event);
    float* buffer = nullptr;
    cudaMalloc(&buffer, 4096);
    float* pinned = nullptr;
    cudaMallocHost(&pinned, 8192);
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string() + " --fail-on-findings");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(result.output.find("3 streams created at " + source.string() + ":7") != std::string::npos);
    CHECK(result.output.find("1 event created at " + source.string() + ":10") != std::string::npos);
    CHECK(result.output.find("4096 bytes of device memory in 1 allocation made at " + source.string() + ":12") !=
          std::string::npos);
    CHECK(result.output.find("8192 bytes of page-locked host memory allocated at " + source.string() + ":14") !=
          std::string::npos);
    CHECK(result.output.find("4 problems") != std::string::npos);
}

TEST_CASE("run reports device work still running when the program ended") {
    ScratchFolder folder;
    fs::path source = folder.write("unwaited.cu", R"(__global__ void fill(float* out, size_t n)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) out[i] = 1;
}

int main()
{
    const size_t n = 1 << 24;
    float* out = nullptr;
    cudaMalloc(&out, n * sizeof(float));
    fill<<<256, 256>>>(out, n);
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string() + " --fail-on-findings");
    INFO(result.output);
    CHECK(result.code == 1);
    CHECK(result.output.find("unfinished  kernel fill at " + source.string() + ":11") != std::string::npos);
    CHECK(result.output.find("was still running when the program ended") != std::string::npos);
}

TEST_CASE("host code that reads device memory is stopped at its own line") {
    ScratchFolder folder;
    fs::path source = folder.write("peek.cu", R"(#include <cstdio>

int main()
{
    int* values = nullptr;
    cudaMalloc(&values, 16 * sizeof(int));
    std::printf("%d\n", values[3]);
    return 0;
}
)");
    CliResult result = run_cli("run " + source.string());
    INFO(result.output);
    CHECK(result.code != 0);
    CHECK(result.output.find("host code near " + source.string() + ":7 read device memory") != std::string::npos);
    CHECK(result.output.find("allocated at " + source.string() + ":6") != std::string::npos);
}

namespace {

// Two streams on each of two GPUs, a peer copy and an event wait between them.
const char* kTwoStreamProgram = R"(#include <cstdio>

__global__ void twice(float* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2.0f;
}

int main()
{
    const int n = 1 << 16;
    float* a = nullptr;
    float* b = nullptr;
    cudaStream_t copy0, compute0, copy1, compute1;
    cudaSetDevice(0);
    cudaMalloc(&a, n * sizeof(float));
    cudaStreamCreate(&copy0);
    cudaStreamCreate(&compute0);
    cudaSetDevice(1);
    cudaMalloc(&b, n * sizeof(float));
    cudaStreamCreate(&copy1);
    cudaStreamCreate(&compute1);
    cudaEvent_t arrived;
    cudaEventCreateWithFlags(&arrived, cudaEventDisableTiming);
    cudaSetDevice(0);
    cudaMemsetAsync(a, 0, n * sizeof(float), compute0);
    twice<<<n / 256, 256, 0, compute0>>>(a, n);
    cudaStreamSynchronize(compute0);
    cudaSetDevice(1);
    cudaMemcpyPeerAsync(b, 1, a, 0, n * sizeof(float), copy1);
    cudaEventRecord(arrived, copy1);
    cudaStreamWaitEvent(compute1, arrived, 0);
    twice<<<n / 256, 256, 0, compute1>>>(b, n);
    cudaStreamSynchronize(compute1);
    cudaEventDestroy(arrived);
    cudaStreamDestroy(copy1);
    cudaStreamDestroy(compute1);
    cudaFree(b);
    cudaSetDevice(0);
    cudaStreamDestroy(copy0);
    cudaStreamDestroy(compute0);
    cudaFree(a);
    std::printf("done\n");
    return 0;
}
)";

}  // namespace

TEST_CASE("timeline runs a program and writes its page: a lane per stream that ran work, the event wait as an arrow") {
    ScratchFolder folder;
    fs::path source = folder.write("streams.cu", kTwoStreamProgram);
    const fs::path page = folder.path / "timeline.html";
    CliResult result = run_cli("timeline " + source.string() + " --topology hgx-h200-8 --out " + page.string());
    INFO(result.output);
    CHECK(result.code == 0);
    CHECK(result.output.find("done") != std::string::npos);
    CHECK(result.output.find("mgpu timeline: timeline written to " + page.string()) != std::string::npos);
    const std::string html = read_page(page);
    auto count = [&](const std::string& what) { return occurrences(html, what); };
    // compute0 on GPU 0; copy1 and compute1 on GPU 1 (copy0 never ran anything).
    CHECK(count("data-lane=\"stream\"") == 3);
    CHECK(count("data-arrow=\"event\"") == 1);
    CHECK(count("data-lane=\"host\"") == 1);
    CHECK(html.find("GPU 0 \u00b7 compute0</text>") != std::string::npos);
    CHECK(html.find("created at streams.cu:18") != std::string::npos);
    CHECK(html.find("Simulated machine: hgx-h200-8, eager schedule.") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("timeline says plainly what is wrong with its options") {
    CliResult missing_folder = run_cli("timeline 3 --out /no/such/folder/t.html");
    CHECK(missing_folder.code == 2);
    CHECK(missing_folder.output.find("the folder /no/such/folder does not exist") != std::string::npos);
    CliResult backend = run_cli("timeline 3 --backend opencl");
    CHECK(backend.code == 2);
    CHECK(backend.output.find("--backend is sim or cuda, not 'opencl'") != std::string::npos);
    CliResult machine = run_cli("timeline 3 --backend cuda --topology hgx-h200-8");
    CHECK(machine.code == 2);
    CHECK(machine.output.find("--topology chooses the simulated machine") != std::string::npos);
}

namespace {

// One GPU, two streams: a kernel on each, the second waiting for the first through an event.
constexpr const char* kOneGpuTwoStreams = R"(#include <cstdio>
__global__ void twice(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2.0f;
}
int main() {
    const int n = 1 << 20;
    float* data = nullptr;
    cudaMalloc(&data, n * sizeof(float));
    cudaStream_t first, second;
    cudaStreamCreate(&first);
    cudaStreamCreate(&second);
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaMemsetAsync(data, 0, n * sizeof(float), first);
    twice<<<n / 256, 256, 0, first>>>(data, n);
    cudaEventRecord(done, first);
    cudaStreamWaitEvent(second, done, 0);
    twice<<<n / 256, 256, 0, second>>>(data, n);
    cudaStreamSynchronize(second);
    cudaEventDestroy(done);
    cudaStreamDestroy(first);
    cudaStreamDestroy(second);
    cudaFree(data);
    std::printf("done\n");
    return 0;
}
)";

}  // namespace

// Registered as its own test (cli-timeline-gpu): nvcc takes a while.
TEST_CASE("timeline --backend cuda builds with nvcc and draws the CUPTI trace, or says why it cannot") {
    ScratchFolder folder;
    const fs::path page = folder.path / "gpus.html";
    SUBCASE("a compile error is nvcc's, at the line in the program") {
        const fs::path broken = folder.write("broken.cu", "int main() {\n    cudaSetDevice(0, 1);\n}\n");
        CliResult result = run_cli("timeline " + broken.string() + " --backend cuda --out " + page.string());
        INFO(result.output);
#if MGPU_TEST_HAVE_GPU_BUILD
        CHECK(result.code == 1);
        CHECK(result.output.find("broken.cu(2)") != std::string::npos);
        CHECK(result.output.find("did not build with nvcc") != std::string::npos);
#else
        CHECK(result.code == 2);
        CHECK(result.output.find("configured without nvcc and CUPTI") != std::string::npos);
#endif
        CHECK(!fs::exists(page));
    }
#if MGPU_TEST_HAVE_GPU_BUILD
    SUBCASE("a program that builds runs on the GPUs, or is not run where there are none") {
        const fs::path source = folder.write("streams.cu", kOneGpuTwoStreams);
        CliResult result = run_cli("timeline " + source.string() + " --backend cuda --out " + page.string());
        INFO(result.output);
        if (result.output.find("no GPU can be traced here") != std::string::npos) {
            CHECK(result.code == 2);
            CHECK(result.output.find("Leave out --backend cuda") != std::string::npos);
            CHECK(!fs::exists(page));
        } else {
            CHECK(result.code == 0);
            CHECK(result.output.find("done") != std::string::npos);
            const std::string html = read_page(page);
            auto count = [&](const std::string& what) { return occurrences(html, what); };
            CHECK(count("data-lane=\"stream\"") == 2);
            CHECK(count("data-arrow=\"event\"") == 1);
            CHECK(html.find("Real GPUs (CUPTI trace): 0 ") != std::string::npos);
        }
    }
#endif
}
