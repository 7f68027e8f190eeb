// Lesson 2 driver: runs the functions of split_work.cu on this machine, one step per numbered task, and
// says what works. `tools/mgpu run 2` builds and runs it (add --topology NAME for another simulated
// machine); `tools/mgpu check 2` grades the same functions more thoroughly.
#include "split_work.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

int device_count = 0;
int failed_checks = 0;
int unwritten_tasks = 0;

// The driver's own even split, so that steps 4 to 6 run whether or not task 1 is written.
std::vector<Share> even_plan(std::size_t n, int parts)
{
    std::vector<Share> plan;
    std::size_t first = 0;
    for (int i = 0; i < parts; ++i) {
        const std::size_t count = n / parts + (static_cast<std::size_t>(i) < n % parts ? 1 : 0);
        plan.push_back(Share{first, count});
        first += count;
    }
    return plan;
}

std::string describe(cudaError_t status)
{
    return std::to_string(static_cast<int>(status)) + " (" + cudaGetErrorName(status) + ")";
}

void pass(const std::string& what)
{
    std::printf("  PASS  %s\n", what.c_str());
}

void fail(const std::string& what, const std::string& hint)
{
    ++failed_checks;
    std::printf("  FAIL  %s\n        what to do: %s\n", what.c_str(), hint.c_str());
}

bool expect(bool ok, const std::string& what, const std::string& hint)
{
    if (ok) pass(what);
    else fail(what, hint);
    return ok;
}

// A task whose body is still the skeleton's says so once, instead of a list of failures.
void not_written(const std::string& task, const std::string& sign)
{
    ++unwritten_tasks;
    std::printf("  ....  %s is not written yet (%s): write it in exercises/02-splitting-work/split_work.cu\n",
                task.c_str(), sign.c_str());
}

int current_device()
{
    int device = -1;
    cudaGetDevice(&device);
    return device;
}

std::string plan_text(const std::vector<Share>& plan)
{
    std::string text;
    for (const Share& share : plan)
        text += (text.empty() ? "" : " ") + std::to_string(share.count) + "@" + std::to_string(share.first);
    return "[" + text + "]";
}

// Empty when the shares cover [0, n) in order; otherwise what is wrong.
std::string coverage_problem(const std::vector<Share>& plan, std::size_t n, std::size_t parts)
{
    if (plan.size() != parts) return std::to_string(plan.size()) + " shares instead of " + std::to_string(parts);
    std::size_t next = 0;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        if (plan[i].first != next)
            return "share " + std::to_string(i) + " starts at " + std::to_string(plan[i].first) + ", not where share " +
                   std::to_string(i) + "-1 ended (" + std::to_string(next) + ")";
        next += plan[i].count;
    }
    if (next != n) return "the shares hold " + std::to_string(next) + " elements, not " + std::to_string(n);
    return {};
}

void step_even_split()
{
    std::printf("\nStep 1, plan_even_split (task 1, section 2.2). Shares as count@first.\n");
    if (plan_even_split(10, 3).empty()) {
        not_written("task 1", "plan_even_split(10, 3) gave no shares");
        return;
    }
    const int parts = device_count < 3 ? 3 : device_count;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t(parts - 1), std::size_t{1000003}}) {
        const std::vector<Share> plan = plan_even_split(n, parts);
        std::printf("        n = %zu over %d: %s\n", n, parts, plan.size() <= 8 ? plan_text(plan).c_str() : "...");
        std::string problem = coverage_problem(plan, n, static_cast<std::size_t>(parts));
        for (std::size_t i = 0; problem.empty() && i < plan.size(); ++i) {
            const std::size_t want = n / parts + (i < n % parts ? 1 : 0);
            if (plan[i].count != want)
                problem = "share " + std::to_string(i) + " has " + std::to_string(plan[i].count) + " elements, not " +
                          std::to_string(want);
        }
        expect(problem.empty(), "n = " + std::to_string(n) + " over " + std::to_string(parts) + " shares",
               problem + ": n / parts each, one more for each of the first n % parts shares");
    }
    expect(plan_even_split(5, 0).empty(), "0 parts give an empty plan", "return {} when parts <= 0");
}

// Memory bandwidth is what a memory-bound kernel such as this lesson's is limited by.
std::vector<double> device_bandwidths()
{
    std::vector<double> weights;
    for (int device = 0; device < device_count; ++device) {
        int clock_khz = 0, bus_bits = 0;
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
        weights.push_back(2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9);   // GB/s, double data rate
    }
    return weights;
}

void step_weighted_split()
{
    std::printf("\nStep 2, plan_weighted_split (task 2, section 2.3)\n");
    if (plan_weighted_split(10, {1.0, 1.0}).empty()) {
        not_written("task 2", "plan_weighted_split(10, {1, 1}) gave no shares");
        return;
    }
    const std::vector<double> weights = device_bandwidths();
    for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{1000003}}) {
        const std::vector<Share> plan = plan_weighted_split(n, weights);
        std::string problem = coverage_problem(plan, n, weights.size());
        double total = 0;
        for (double w : weights) total += w;
        for (std::size_t i = 0; problem.empty() && i < plan.size(); ++i) {
            const double ideal = static_cast<double>(n) * weights[i] / total;
            if (std::fabs(static_cast<double>(plan[i].count) - ideal) >= 1.0)
                problem = "share " + std::to_string(i) + " has " + std::to_string(plan[i].count) + " elements, ideal " +
                          std::to_string(ideal);
        }
        std::printf("        n = %zu by memory bandwidth: %s\n", n, plan_text(plan).c_str());
        expect(problem.empty(), "n = " + std::to_string(n) + " split by the devices' memory bandwidth",
               problem + ": the whole part of each ideal, then one more for the largest fractions until n");
    }
    expect(plan_weighted_split(10, {1.0, 0.0, 1.0})[1].count == 0, "a weight of 0 gets an empty share",
           "never hand a left-over element to a share whose weight is 0");
    expect(plan_weighted_split(10, {0.0, 0.0}).empty() && plan_weighted_split(10, {1.0, -1.0}).empty(),
           "weights adding up to 0, or a negative weight, give an empty plan", "check the weights first");
}

float* step_host_buffer(std::size_t n)
{
    std::printf("\nStep 3, allocate_host_buffer (task 3, section 2.6)\n");
    float* buffer = allocate_host_buffer(n);
    if (buffer == nullptr) {
        not_written("task 3", "allocate_host_buffer(" + std::to_string(n) + ") gave nullptr");
        return nullptr;
    }
    cudaPointerAttributes attributes{};
    const cudaError_t status = cudaPointerGetAttributes(&attributes, buffer);
    cudaGetLastError();
    expect(status == cudaSuccess && attributes.type == cudaMemoryTypeHost,
           "the buffer is page-locked host memory (cudaPointerGetAttributes says cudaMemoryTypeHost)",
           "allocate it with cudaMallocHost: malloc and new give pageable memory, which makes the host wait");
    expect(allocate_host_buffer(0) == nullptr, "allocate_host_buffer(0) gives nullptr", "return nullptr for n = 0");
    return buffer;
}

std::string compare(const float* out, const std::vector<float>& in, std::size_t n, float factor)
{
    std::size_t wrong = 0, first = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (out[i] != factor * in[i] && wrong++ == 0) first = i;
    if (wrong == 0) return {};
    return std::to_string(wrong) + " of " + std::to_string(n) + " elements wrong, first at [" + std::to_string(first) +
           "]: " + std::to_string(out[first]) + " instead of " + std::to_string(factor * in[first]);
}

// Runs `run` on the plans the steps use, checking every element and the caller's device.
template <class Run>
void check_runs(const std::string& function, float* out, float* in, std::size_t capacity, Run run)
{
    std::mt19937 generator(7);
    std::uniform_real_distribution<float> value(0.5f, 4.0f);
    const float factor = 2.5f;
    for (std::size_t n : {std::size_t{1}, std::size_t(device_count > 1 ? device_count - 1 : 2), std::size_t{100003},
                          capacity}) {
        std::vector<float> input(n);
        for (std::size_t i = 0; i < n; ++i) input[i] = in[i] = value(generator);
        for (std::size_t i = 0; i < n; ++i) out[i] = -1.0f;
        const std::vector<Share> plan = even_plan(n, device_count);
        const int caller = device_count - 1;
        cudaSetDevice(caller);
        const std::string what = function + ", n = " + std::to_string(n) + " over " + std::to_string(device_count) +
                                 " device" + (device_count == 1 ? "" : "s");
        const cudaError_t status = run(out, in, factor, plan);
        if (!expect(status == cudaSuccess, what + ": returns cudaSuccess", "it returned " + describe(status))) continue;
        const std::string mismatch = compare(out, input, n, factor);
        expect(mismatch.empty(), what + ": every element is factor * in",
               mismatch + ": copy each share in at in + first and back to out + first, and wait for every device");
        expect(current_device() == caller, what + ": the caller's device is current again",
               "device " + std::to_string(current_device()) + " is: give the caller's device back (section 2.5)");
    }
}

bool step_one_thread(float* out, float* in, std::size_t capacity)
{
    std::printf("\nStep 4, scale_on_devices (task 4, sections 2.4 and 2.5)\n");
    const cudaError_t probe = scale_on_devices(out, in, 1.0f, {Share{0, 1}}, nullptr);
    if (probe == cudaErrorNotSupported) {
        not_written("task 4", "scale_on_devices returned " + describe(probe));
        return false;
    }
    check_runs("scale_on_devices", out, in, capacity, [](float* o, const float* i, float f, const std::vector<Share>& p) {
        return scale_on_devices(o, i, f, p, nullptr);
    });
    return true;
}

void step_threads(float* out, float* in, std::size_t capacity)
{
    std::printf("\nStep 5, scale_with_threads (task 5, section 2.7)\n");
    const cudaError_t probe = scale_with_threads(out, in, 1.0f, {Share{0, 1}});
    if (probe == cudaErrorNotSupported) {
        not_written("task 5", "scale_with_threads returned " + describe(probe));
        return;
    }
    check_runs("scale_with_threads", out, in, capacity, [](float* o, const float* i, float f, const std::vector<Share>& p) {
        return scale_with_threads(o, i, f, p);
    });
}

void step_timing(float* out, float* in, std::size_t capacity)
{
    std::printf("\nStep 6, per-device times (task 6, section 2.8)\n");
    for (std::size_t i = 0; i < capacity; ++i) in[i] = 1.0f;
    const std::vector<Share> plan = even_plan(capacity, device_count);
    std::vector<float> device_ms;
    const cudaError_t status = scale_on_devices(out, in, 2.0f, plan, &device_ms);
    if (!expect(status == cudaSuccess, "scale_on_devices with device_ms returns cudaSuccess",
                "it returned " + describe(status)))
        return;
    bool any = false;
    for (float ms : device_ms) any = any || ms > 0;
    if (device_ms.size() != plan.size() || !any) {
        not_written("task 6", "device_ms holds " + std::to_string(device_ms.size()) + " entries, none above 0");
        return;
    }
    for (std::size_t d = 0; d < device_ms.size(); ++d)
        std::printf("        device %zu: %zu elements in %.3f ms\n", d, plan[d].count, device_ms[d]);
    bool all_positive = true;
    for (std::size_t d = 0; d < device_ms.size(); ++d) all_positive = all_positive && (plan[d].count == 0 || device_ms[d] > 0);
    expect(all_positive, "every device with work reports a time above 0",
           "record a start and an end event on each device's own stream and read cudaEventElapsedTime after its "
           "synchronisation");
}

}  // namespace

int main()
{
    const cudaError_t counted = cudaGetDeviceCount(&device_count);
    if (counted != cudaSuccess || device_count == 0) {
        std::printf("No CUDA device here (cudaGetDeviceCount gave %s). On the simulator pick a machine with\n"
                    "--topology hgx-h200-8, pcie-4 or mixed-3.\n", describe(counted).c_str());
        return 1;
    }
    std::printf("Lesson 2, splitting work across GPUs: %d device%s\n", device_count, device_count == 1 ? "" : "s");
    if (device_count == 1) std::printf("With one GPU every plan has one share. Try --topology hgx-h200-8.\n");

    step_even_split();
    step_weighted_split();
    const std::size_t capacity = (std::size_t{1} << 22) + 7;
    float* in = step_host_buffer(capacity);
    float* out = in != nullptr ? allocate_host_buffer(capacity) : nullptr;
    // Until task 3 is written the driver pins its own buffers, so that tasks 4 to 6 can be tried first.
    const bool own_buffers = in == nullptr || out == nullptr;
    if (own_buffers) {
        free_host_buffer(in);
        in = out = nullptr;
        cudaMallocHost(reinterpret_cast<void**>(&in), capacity * sizeof(float));
        cudaMallocHost(reinterpret_cast<void**>(&out), capacity * sizeof(float));
    }
    if (step_one_thread(out, in, capacity)) {
        step_threads(out, in, capacity);
        step_timing(out, in, capacity);
    } else {
        std::printf("  ....  tasks 5 and 6 build on task 4: write it first\n");
    }
    if (own_buffers) {
        cudaFreeHost(in);
        cudaFreeHost(out);
    } else {
        free_host_buffer(in);
        free_host_buffer(out);
    }

    if (failed_checks == 0 && unwritten_tasks == 0) {
        std::printf("\nEvery step passes on this machine. Next: tools/mgpu check 2\n");
        return 0;
    }
    if (failed_checks == 0) {
        std::printf("\n%d task%s still to write (marked .... above); nothing written so far fails.\n",
                    unwritten_tasks, unwritten_tasks == 1 ? " is" : "s are");
        return 1;
    }
    std::printf("\n%d check%s failed. Fix the first one first: later steps build on earlier ones.\n",
                failed_checks, failed_checks == 1 ? "" : "s");
    return 1;
}
