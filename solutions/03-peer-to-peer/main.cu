// Lesson 3 driver: runs the functions of peer_access.cu on this machine, one step per numbered task, and says
// what works. `tools/mgpu run 3` builds and runs it (add --topology NAME for another simulated
// machine); `tools/mgpu check 3` grades the same functions more thoroughly.
#include "peer_access.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

int device_count = 0;
int failed_checks = 0;

// What the runtime itself answers: the independent truth that can_reach is compared with.
bool runtime_can_peer(int from, int to)
{
    int can_access = 0;
    if (cudaDeviceCanAccessPeer(&can_access, from, to) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return can_access == 1;
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

// The skeleton's functions return 801 until they are written; say so instead of listing symptoms.
bool written(cudaError_t status, const std::string& function, const std::string& todo)
{
    if (status != cudaErrorNotSupported) return true;
    fail(function + " returned " + describe(status) + ": not written yet",
         "write " + todo + " in exercises/03-peer-to-peer/peer_access.cu");
    return false;
}

// A kernel that touched memory it had no access to leaves error 700 on its device, and every later
// call there fails too: nothing after that can be trusted, so the run ends with the reason.
void stop_if_sticky(cudaError_t status, const std::string& where)
{
    if (status != cudaErrorIllegalAddress && status != cudaErrorLaunchFailure) return;
    std::printf("\n  STOP  %s gave %s.\n"
                "        A kernel read or wrote memory its device may not reach: most often a pointer on\n"
                "        another GPU without peer access opened FROM the kernel's device (lesson 3,\n"
                "        section 3.8). The error is sticky: every later call on that device fails, so the\n"
                "        run ends here. Fix it and run again.\n",
                where.c_str(), describe(status).c_str());
    std::exit(1);
}

bool no_error_left(const std::string& after)
{
    const cudaError_t left = cudaGetLastError();
    return expect(left == cudaSuccess, "no error left behind after " + after,
                  "cudaGetLastError() returned " + describe(left) +
                      ": clear errors your function expects (101 from a bad id, 704, 705) with "
                      "cudaGetLastError() before returning");
}

int current_device()
{
    int device = -1;
    cudaGetDevice(&device);
    return device;
}

std::size_t free_bytes(int device)
{
    const int caller = current_device();
    std::size_t free = 0, total = 0;
    cudaSetDevice(device);
    cudaMemGetInfo(&free, &total);
    cudaSetDevice(caller);
    return free;
}

bool device_unchanged(int expected, const std::string& after)
{
    const int now = current_device();
    return expect(now == expected, "current device is still " + std::to_string(expected) + " after " + after,
                  "it is " + std::to_string(now) + ": remember cudaGetDevice at the start and cudaSetDevice "
                  "back before every return (lesson 3, section 3.5)");
}

// Whether kernels on `from` can use memory on `to` right now. Enabling answers 704 when it is open;
// when it was not, the probe opened it and closes it again, so the state is left as found.
bool direction_is_open(int from, int to)
{
    const int caller = current_device();
    cudaSetDevice(from);
    const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
    cudaGetLastError();
    if (status == cudaSuccess) cudaDeviceDisablePeerAccess(to);
    cudaSetDevice(caller);
    return status == cudaErrorPeerAccessAlreadyEnabled;
}

// Whether work queued on `device` so far is still running. An event recorded on the legacy default
// stream completes only after the earlier work of every blocking stream of that device, and
// cudaMemcpyPeer's work is among it.
bool still_running(int device)
{
    const int caller = current_device();
    cudaSetDevice(device);
    cudaEvent_t probe = nullptr;
    bool running = false;
    if (cudaEventCreateWithFlags(&probe, cudaEventDisableTiming) == cudaSuccess) {
        cudaEventRecord(probe, 0);
        running = cudaEventQuery(probe) == cudaErrorNotReady;
        cudaEventSynchronize(probe);
        cudaEventDestroy(probe);
    }
    cudaGetLastError();
    cudaSetDevice(caller);
    return running;
}

bool finished_on_return(int dst_device, int src_device, const std::string& what, const std::string& hint)
{
    const bool running = still_running(dst_device) || still_running(src_device);
    return expect(!running, what + ": its work has finished when it returns", hint);
}

std::vector<float> random_values(std::size_t n, unsigned seed)
{
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> magnitude(0.5f, 4.0f);
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = (i % 2 == 0 ? 1.0f : -1.0f) * magnitude(generator);
    return values;
}

// A device buffer that frees itself; the driver's own calls are checked so that a failure here is
// never blamed on the student's code.
struct DeviceBuffer {
    float* data = nullptr;
    int device = 0;
    DeviceBuffer(int on_device, std::size_t n) : device(on_device)
    {
        const int caller = current_device();
        cudaSetDevice(device);
        if (n > 0 && cudaMalloc(&data, n * sizeof(float)) != cudaSuccess) {
            std::printf("  STOP  the driver could not allocate %zu floats on device %d\n", n, device);
            std::exit(1);
        }
        cudaSetDevice(caller);
    }
    ~DeviceBuffer()
    {
        const int caller = current_device();
        cudaSetDevice(device);
        cudaFree(data);
        cudaSetDevice(caller);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void upload(DeviceBuffer& buffer, const std::vector<float>& values)
{
    if (values.empty()) return;
    const cudaError_t status =
        cudaMemcpy(buffer.data, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice);
    stop_if_sticky(status, "copying the input to device " + std::to_string(buffer.device));
}

std::vector<float> download(const DeviceBuffer& buffer, std::size_t n)
{
    std::vector<float> values(n);
    if (n == 0) return values;
    const cudaError_t status = cudaMemcpy(values.data(), buffer.data, n * sizeof(float), cudaMemcpyDeviceToHost);
    stop_if_sticky(status, "reading the result back from device " + std::to_string(buffer.device));
    return values;
}

// Empty when every element matches; otherwise where the first mismatch is.
std::string compare(const std::vector<float>& got, const std::vector<float>& expected)
{
    std::size_t wrong = 0, first = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const float tolerance = 1e-6f * std::fabs(expected[i]);
        if (!(std::fabs(got[i] - expected[i]) <= tolerance)) {
            if (wrong++ == 0) first = i;
        }
    }
    if (wrong == 0) return {};
    return std::to_string(wrong) + " of " + std::to_string(expected.size()) + " elements wrong, first at [" +
           std::to_string(first) + "]: " + std::to_string(got[first]) + " instead of " +
           std::to_string(expected[first]);
}

struct DevicePair {
    int dst;
    int src;
    std::string label() const { return "device " + std::to_string(src) + " -> device " + std::to_string(dst); }
};

// The pairs the data steps use: one that can peer and one that cannot, where the machine has them;
// one device alone is its own pair.
std::vector<DevicePair> data_pairs()
{
    std::vector<DevicePair> pairs;
    bool have_peer = false, have_staged = false;
    for (int src = 0; src < device_count; ++src)
        for (int dst = 0; dst < device_count; ++dst) {
            if (src == dst) continue;
            const bool peers = runtime_can_peer(dst, src);
            bool& have_kind = peers ? have_peer : have_staged;
            if (!have_kind) {
                pairs.push_back({dst, src});
                have_kind = true;
            }
        }
    if (pairs.empty()) pairs.push_back({0, 0});
    return pairs;
}

int directions_that_can_peer()
{
    int count = 0;
    for (int from = 0; from < device_count; ++from)
        for (int to = 0; to < device_count; ++to)
            if (from != to && runtime_can_peer(from, to)) ++count;
    return count;
}

void step_can_reach()
{
    std::printf("\nStep 1, can_reach (task 1, section 3.4). Rows: from, columns: to; the runtime's answer,\n"
                "and ! where can_reach disagrees.\n\n       ");
    for (int to = 0; to < device_count; ++to) std::printf("%4d ", to);
    std::printf("\n");
    int disagreements = 0;
    for (int from = 0; from < device_count; ++from) {
        std::printf("  %3d  ", from);
        for (int to = 0; to < device_count; ++to) {
            const bool truth = from != to && runtime_can_peer(from, to);
            const bool answer = can_reach(from, to);
            if (answer != truth) ++disagreements;
            std::printf("%4s%c", from == to ? "-" : (truth ? "yes" : "no"), answer != truth ? '!' : ' ');
        }
        std::printf("\n");
    }
    std::printf("\n");
    // Where no pair can peer, "no" everywhere is right, and it is also what an unwritten can_reach says.
    if (directions_that_can_peer() == 0) {
        std::printf("  ....  no pair of this machine can peer, so every answer is no whether or not can_reach is\n"
                    "        written: run on --topology islands-2x2 or hgx-h200-8 to see it answer\n");
        return;
    }
    expect(disagreements == 0, "can_reach agrees with cudaDeviceCanAccessPeer for every pair",
           std::to_string(disagreements) + " answers differ: return what cudaDeviceCanAccessPeer reports, "
           "and false for the same device");
    if (disagreements == directions_that_can_peer() && disagreements > 0) {
        std::printf("  ....  can_reach says no to every pair: is task 1 written yet? The ids that are not devices\n"
                    "        are checked once it answers\n");
        return;
    }
    expect(!can_reach(-1, 0) && !can_reach(0, device_count), "can_reach says no for ids that are not devices",
           "when cudaDeviceCanAccessPeer fails, answer false");
    no_error_left("can_reach(-1, 0) and can_reach(0, " + std::to_string(device_count) + ")");
}

void step_open_peer_access()
{
    std::printf("\nStep 2, open_peer_access (task 2, sections 3.5 and 3.6)\n");
    int from = -1, to = -1;
    for (int a = 0; a < device_count && from < 0; ++a)
        for (int b = 0; b < device_count && from < 0; ++b)
            if (a != b && runtime_can_peer(a, b)) {
                from = a;
                to = b;
            }

    const cudaError_t self = open_peer_access(0, 0);
    if (!written(self, "open_peer_access(0, 0)", "task 2")) return;
    expect(self == cudaErrorPeerAccessUnsupported, "open_peer_access(0, 0) refuses with 217",
           "it returned " + describe(self) + ": a device is never its own peer; check can_reach first");
    no_error_left("open_peer_access(0, 0)");

    if (from < 0) {
        std::printf("  (no pair on this machine can peer: try --topology hgx-h200-8 or islands-2x2)\n");
        if (device_count >= 2) {
            const cudaError_t refused = open_peer_access(0, 1);
            expect(refused == cudaErrorPeerAccessUnsupported, "open_peer_access(0, 1) refuses with 217",
                   "it returned " + describe(refused) + ": when can_reach says no, return "
                   "cudaErrorPeerAccessUnsupported without calling cudaDeviceEnablePeerAccess");
            no_error_left("open_peer_access(0, 1)");
        }
        return;
    }

    // Calling from a third device shows whether the function makes `from` current and restores ours.
    int caller = to;
    for (int d = 0; d < device_count; ++d)
        if (d != from && d != to) {
            caller = d;
            break;
        }
    cudaSetDevice(caller);
    const std::string call = "open_peer_access(" + std::to_string(from) + ", " + std::to_string(to) + ")";
    const cudaError_t first = open_peer_access(from, to);
    expect(first == cudaSuccess, call + " succeeds", "it returned " + describe(first));
    no_error_left(call);
    device_unchanged(caller, call);
    expect(direction_is_open(from, to), "kernels on device " + std::to_string(from) + " may now use device " +
               std::to_string(to) + "'s memory",
           "make `from` current (cudaSetDevice(from)) before cudaDeviceEnablePeerAccess(to, 0)");
    if (runtime_can_peer(to, from))
        expect(!direction_is_open(to, from), "the opposite direction is still closed",
               "access is one way: open only from -> to (section 3.6)");

    const cudaError_t again = open_peer_access(from, to);
    expect(again == cudaSuccess, call + " a second time succeeds",
           "it returned " + describe(again) + ": 704 means already open, which is a success here");
    no_error_left(call + " a second time");

    for (int a = 0; a < device_count; ++a)
        for (int b = 0; b < device_count; ++b)
            if (a != b && !runtime_can_peer(a, b)) {
                const cudaError_t refused = open_peer_access(a, b);
                const std::string refused_call = "open_peer_access(" + std::to_string(a) + ", " + std::to_string(b) + ")";
                expect(refused == cudaErrorPeerAccessUnsupported, refused_call + " refuses with 217 (this pair cannot peer)",
                       "it returned " + describe(refused) + ": when can_reach says no, return "
                       "cudaErrorPeerAccessUnsupported without calling cudaDeviceEnablePeerAccess");
                no_error_left(refused_call);
                return;
            }
}

int directions_open()
{
    int count = 0;
    for (int from = 0; from < device_count; ++from)
        for (int to = 0; to < device_count; ++to)
            if (from != to && runtime_can_peer(from, to) && direction_is_open(from, to)) ++count;
    return count;
}

void step_open_all_peer_access()
{
    std::printf("\nStep 3, open_all_peer_access (task 3, section 3.5)\n");
    const int expected = directions_that_can_peer();
    if (expected == 0) {
        std::printf("  ....  no pair of this machine can peer: nothing to open here, so this step shows nothing\n"
                    "        (run on --topology islands-2x2 or hgx-h200-8)\n");
        return;
    }
    cudaSetDevice(0);
    const int opened = open_all_peer_access();
    if (opened == 0 && directions_open() == 0) {
        fail("open_all_peer_access returned 0 and opened nothing: not written yet?",
             "write task 3 in exercises/03-peer-to-peer/peer_access.cu: " + std::to_string(expected) +
                 " directions can peer here");
        return;
    }
    expect(opened == expected, "open_all_peer_access returns " + std::to_string(expected) +
               " (the directions that can peer here)",
           "it returned " + std::to_string(opened) + ": call open_peer_access for every ordered pair that "
           "can_reach allows and count the successes");
    no_error_left("open_all_peer_access");
    device_unchanged(0, "open_all_peer_access");
    const int open = directions_open();
    expect(open == expected, std::to_string(expected) + " directions are really open",
           std::to_string(open) + " are: enable each direction with its `from` device current");
}

void step_copy_between_devices()
{
    std::printf("\nStep 4, copy_between_devices (task 4, sections 3.7 and 3.9)\n");
    const cudaError_t empty = copy_between_devices(nullptr, 0, nullptr, 0, 0);
    if (!written(empty, "copy_between_devices", "task 4")) return;
    expect(empty == cudaSuccess, "copying 0 bytes succeeds", "it returned " + describe(empty));
    const std::size_t n = (1u << 20) + 3;
    for (const DevicePair& pair : data_pairs()) {
        const std::string what = "copies " + std::to_string(n) + " floats " + pair.label() +
                                 (runtime_can_peer(pair.dst, pair.src) ? " (peer path)" : " (staged)");
        const std::vector<float> input = random_values(n, 4u + pair.src * 8u + pair.dst);
        DeviceBuffer src(pair.src, n), dst(pair.dst, n);
        upload(src, input);
        const cudaError_t status = copy_between_devices(dst.data, pair.dst, src.data, pair.src, n * sizeof(float));
        // Asked at once: any later call of this driver could wait for the copy itself.
        const bool finished = status != cudaSuccess ||
                              finished_on_return(pair.dst, pair.src, what, "cudaMemcpyPeer may return before the "
                                                 "bytes have landed: wait for the copy before returning (section 3.7)");
        stop_if_sticky(status, "copy_between_devices");
        if (!expect(status == cudaSuccess, what + ": returns cudaSuccess", "it returned " + describe(status)) || !finished)
            continue;
        const std::string mismatch = compare(download(dst, n), input);
        expect(mismatch.empty(), what, mismatch + ": copy all `bytes` bytes with cudaMemcpyPeer and wait for it");
    }
}

void step_scale_from_peer()
{
    std::printf("\nStep 5, scale_from_peer (task 5, sections 3.8 and 3.9)\n");
    const cudaError_t empty = scale_from_peer(nullptr, 0, nullptr, 0, 0, 2.0f);
    if (!written(empty, "scale_from_peer", "task 5")) return;
    expect(empty == cudaSuccess, "n = 0 succeeds and does nothing", "it returned " + describe(empty));
    const float factor = 2.5f;
    const std::vector<DevicePair> pairs = data_pairs();
    for (std::size_t p = 0; p < pairs.size(); ++p) {
        const DevicePair& pair = pairs[p];
        const bool peer = runtime_can_peer(pair.dst, pair.src);
        // 64 MiB of floats once, on the first pair: index arithmetic must not overflow.
        std::vector<std::size_t> sizes{1, 1001};
        if (p == 0) sizes.push_back(std::size_t(16) << 20);
        for (std::size_t n : sizes) {
            const std::string what = "n = " + std::to_string(n) + ", " + pair.label() +
                                     (peer ? " (reads across)" : " (pair cannot peer: local copy)");
            const std::vector<float> input = random_values(n, 7u + static_cast<unsigned>(n));
            DeviceBuffer src(pair.src, n), dst(pair.dst, n);
            upload(src, input);
            const cudaError_t status = scale_from_peer(dst.data, pair.dst, src.data, pair.src, n, factor);
            if (status == cudaSuccess)
                finished_on_return(pair.dst, pair.src, what, "a kernel launch returns before the kernel runs: wait "
                                   "for it (cudaDeviceSynchronize) before returning (section 3.8)");
            stop_if_sticky(status, "scale_from_peer with " + what);
            if (!expect(status == cudaSuccess, what + ": returns cudaSuccess", "it returned " + describe(status)))
                continue;
            std::vector<float> expected(n);
            for (std::size_t i = 0; i < n; ++i) expected[i] = factor * input[i];
            const std::string mismatch = compare(download(dst, n), expected);
            expect(mismatch.empty(), what,
                   mismatch + ": check the grid-stride loop (every i < n, no further) and, when the pair cannot "
                   "peer, that the local copy holds all n floats (n * sizeof(float) bytes)");
        }
    }
}

void step_pipelined_scale()
{
    std::printf("\nStep 6, pipelined_scale (task 6, section 3.10)\n");
    const cudaError_t empty = pipelined_scale(nullptr, 0, nullptr, 0, 0, 256, 2.0f);
    if (!written(empty, "pipelined_scale", "task 6")) return;
    expect(empty == cudaSuccess, "n = 0 succeeds and does nothing", "it returned " + describe(empty));
    const float factor = -1.5f;
    struct Shape { std::size_t n, chunk; };
    const Shape shapes[] = {{1, 256}, {100003, 4096}, {(std::size_t(1) << 22) + 5, std::size_t(1) << 18}};
    for (const DevicePair& pair : data_pairs()) {
        for (const Shape& shape : shapes) {
            const std::string what = "n = " + std::to_string(shape.n) + " in chunks of " +
                                     std::to_string(shape.chunk) + ", " + pair.label();
            const std::vector<float> input = random_values(shape.n, 11u + static_cast<unsigned>(shape.n));
            DeviceBuffer src(pair.src, shape.n), dst(pair.dst, shape.n);
            upload(src, input);
            const int caller = current_device();
            const std::size_t free_before = free_bytes(pair.dst);
            const cudaError_t status =
                pipelined_scale(dst.data, pair.dst, src.data, pair.src, shape.n, shape.chunk, factor);
            const std::size_t free_after = free_bytes(pair.dst);
            stop_if_sticky(status, "pipelined_scale with " + what);
            if (!expect(status == cudaSuccess, what + ": returns cudaSuccess", "it returned " + describe(status)))
                continue;
            std::vector<float> expected(shape.n);
            for (std::size_t i = 0; i < shape.n; ++i) expected[i] = factor * input[i];
            const std::string mismatch = compare(download(dst, shape.n), expected);
            expect(mismatch.empty(), what,
                   mismatch + ": each kernel must wait (cudaStreamWaitEvent) for its chunk's event, the last "
                   "chunk may be shorter, and the function must wait for the compute stream before returning");
            device_unchanged(caller, "pipelined_scale");
            // Half the data's size: a smaller drop can be the runtime's own bookkeeping.
            const std::size_t data_bytes = shape.n * sizeof(float);
            expect(free_after + data_bytes / 2 > free_before, "device " + std::to_string(pair.dst) +
                       " has as much free memory afterwards as before",
                   std::to_string(free_before - free_after) + " bytes fewer are free: the pipeline needs no buffer "
                   "of its own (each chunk lands in dst); cudaFree anything it allocated before returning "
                   "(section 3.10)");
        }
    }
}

void step_close_all_peer_access()
{
    std::printf("\nStep 7, close_all_peer_access (task 7, section 3.11)\n");
    const int open_before = directions_open();
    if (open_before == 0) {
        std::printf("  ....  nothing is open, so there is nothing to close: this step shows something once task 2\n"
                    "        and task 3 open access%s\n",
                    directions_that_can_peer() == 0 ? " on a machine whose GPUs can peer (--topology islands-2x2)" : "");
        return;
    }
    const int caller = device_count - 1;
    cudaSetDevice(caller);
    const int closed = close_all_peer_access();
    expect(closed == open_before, "close_all_peer_access returns " + std::to_string(open_before) +
               " (the directions the earlier steps opened)",
           "it returned " + std::to_string(closed) + ": disable every direction you opened, with its `from` "
           "device current, and count the ones that close");
    no_error_left("close_all_peer_access");
    device_unchanged(caller, "close_all_peer_access");
    const int open_after = directions_open();
    expect(open_after == 0, "no direction is open any more",
           std::to_string(open_after) + " still are: call cudaDeviceDisablePeerAccess(to) with `from` current");

    // A pair that could peer but whose access is closed again must take the local-copy path.
    for (const DevicePair& pair : data_pairs()) {
        if (!runtime_can_peer(pair.dst, pair.src)) continue;
        const std::size_t n = 1001;
        const std::string what = "scale_from_peer " + pair.label() + " after access was closed";
        const std::vector<float> input = random_values(n, 99u);
        DeviceBuffer src(pair.src, n), dst(pair.dst, n);
        upload(src, input);
        const cudaError_t status = scale_from_peer(dst.data, pair.dst, src.data, pair.src, n, 3.0f);
        stop_if_sticky(status, what + " (the pair can peer, but its access is closed now: use the local copy)");
        if (status == cudaErrorNotSupported) return;   // step 5 already said task 5 is not written
        if (!expect(status == cudaSuccess, what + ": returns cudaSuccess", "it returned " + describe(status)))
            continue;
        std::vector<float> expected(n);
        for (std::size_t i = 0; i < n; ++i) expected[i] = 3.0f * input[i];
        const std::string mismatch = compare(download(dst, n), expected);
        expect(mismatch.empty(), what, mismatch + ": with access closed, copy the input over first (section 3.9)");
    }
}

}  // namespace

int main()
{
    const cudaError_t counted = cudaGetDeviceCount(&device_count);
    if (counted != cudaSuccess || device_count == 0) {
        std::printf("No CUDA device here (cudaGetDeviceCount gave %s). On the simulator pick a machine with\n"
                    "--topology hgx-h200-8, islands-2x2 or pcie-4.\n", describe(counted).c_str());
        return 1;
    }
    std::printf("Lesson 3, peer-to-peer memory access: %d device%s\n", device_count, device_count == 1 ? "" : "s");
    if (device_count == 1)
        std::printf("With one GPU nothing can peer; each step runs on device 0 alone. Try --topology hgx-h200-8.\n");

    step_can_reach();
    step_open_peer_access();
    step_open_all_peer_access();
    step_copy_between_devices();
    step_scale_from_peer();
    step_pipelined_scale();
    step_close_all_peer_access();

    if (failed_checks == 0) {
        std::printf("\nEvery step passes on this machine. Next: tools/mgpu check 3\n");
        return 0;
    }
    std::printf("\n%d check%s failed. Fix the first one first: later steps build on earlier ones.\n",
                failed_checks, failed_checks == 1 ? "" : "s");
    return 1;
}
