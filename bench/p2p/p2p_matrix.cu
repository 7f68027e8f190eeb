// Peer-to-peer copy bandwidth and latency between every ordered pair of GPUs, with peer access
// off and on, plus each device with itself; then lesson 3's copy_between_devices against a plain
// cudaMemcpyPeerAsync of the same size between devices 0 and 1.
//
// The same source runs on real GPUs (real times) and on the simulator (modelled times, since the
// simulator's cudaEventElapsedTime reports its virtual clock); `mgpu validate` runs both and
// prints each figure beside its prediction.
//
// Output, one measurement a line (ms is the time of one copy, or of one round of both directions):
//   p2p devices count=N
//   p2p access src=S dst=D can=0|1
//   p2p uni src=S dst=D p2p=0|1 bytes=B ms=T       one direction, B bytes a copy
//   p2p bi src=S dst=D p2p=0|1 bytes=B ms=T        both directions at once, B = bytes of both copies
//   p2p lat src=S dst=D p2p=0|1 bytes=B ms=T       small copies back to back
//   p2p solution-copy src=0 dst=1 p2p=0|1 bytes=B ms=T
//   p2p memcpy-peer-async src=0 dst=1 p2p=0|1 bytes=B ms=T
//   p2p note TEXT                                  for people, ignored by readers
//   p2p-done
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"
#include "peer_access.h"

// Keeps a stream busy for `cycles` device clock cycles, so that everything queued behind it is
// queued before the GPU starts on it: the events then time the copies back to back, not how fast
// the host can queue them.
__global__ void hold_stream(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

namespace {

struct Settings {
    std::size_t bytes = 64u << 20;   // per copy for bandwidth: far past the fixed cost of a copy
    int repeats = 5;                 // copies timed together for one bandwidth figure
    std::size_t latency_bytes = 4;
    int latency_repeats = 100;
};

// What one device owns for the measurements.
struct Device {
    void* send = nullptr;            // copies read from here
    void* receive = nullptr;         // and write here
    cudaStream_t streams[2]{};
    cudaEvent_t start{}, stop{}, joined{};
    long long hold_cycles = 0;       // about 10 ms of this device's clock
};

std::vector<Device> devices;
Settings settings;

void set_up(int index) {
    Device& d = devices[index];
    CHECK(cudaSetDevice(index));
    CHECK(cudaMalloc(&d.send, settings.bytes));
    CHECK(cudaMalloc(&d.receive, settings.bytes));
    CHECK(cudaMemset(d.send, 1, settings.bytes));
    CHECK(cudaMemset(d.receive, 0, settings.bytes));
    for (cudaStream_t& stream : d.streams) CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&d.start));
    CHECK(cudaEventCreate(&d.stop));
    CHECK(cudaEventCreateWithFlags(&d.joined, cudaEventDisableTiming));
    int clock_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
    d.hold_cycles = 10LL * clock_khz;
    CHECK(cudaDeviceSynchronize());
}

void tear_down(int index) {
    Device& d = devices[index];
    CHECK(cudaSetDevice(index));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(d.send));
    CHECK(cudaFree(d.receive));
    for (cudaStream_t stream : d.streams) CHECK(cudaStreamDestroy(stream));
    CHECK(cudaEventDestroy(d.start));
    CHECK(cudaEventDestroy(d.stop));
    CHECK(cudaEventDestroy(d.joined));
}

bool can_access(int from, int to) {
    if (from == to) return false;
    int can = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, from, to));
    return can == 1;
}

// Peer access for the pair, each direction where the driver allows it; `on` false undoes it.
void set_peer_access(int a, int b, bool on) {
    for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        if (!can_access(from, to)) continue;
        CHECK(cudaSetDevice(from));
        CHECK(on ? cudaDeviceEnablePeerAccess(to, 0) : cudaDeviceDisablePeerAccess(to));
    }
}

void report(const char* what, int src, int dst, int p2p, std::size_t bytes, float ms) {
    std::printf("p2p %s src=%d dst=%d p2p=%d bytes=%zu ms=%.6f\n", what, src, dst, p2p, bytes, ms);
    std::fflush(stdout);
}

float elapsed_ms(const Device& d) {
    CHECK(cudaEventSynchronize(d.stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, d.start, d.stop));
    return ms;
}

// One direction: `count` copies of `bytes` from src to dst on a stream of src, timed from the
// first to the last.
float one_way_ms(int src, int dst, std::size_t bytes, int count) {
    Device& from = devices[src];
    Device& to = devices[dst];
    cudaStream_t stream = from.streams[0];
    CHECK(cudaSetDevice(src));
    CHECK(cudaMemcpyPeerAsync(to.receive, dst, from.send, src, bytes, stream));   // warm-up
    CHECK(cudaStreamSynchronize(stream));
    hold_stream<<<1, 1, 0, stream>>>(from.hold_cycles);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(from.start, stream));
    for (int i = 0; i < count; ++i) CHECK(cudaMemcpyPeerAsync(to.receive, dst, from.send, src, bytes, stream));
    CHECK(cudaEventRecord(from.stop, stream));
    return elapsed_ms(from) / count;
}

// Both directions at once: src -> dst on a stream of src and dst -> src on a stream of dst, both
// started by one event and timed until the later of the two finishes. On one device the two
// copies share its buffers; what they leave there does not matter for timing.
float both_ways_ms(int src, int dst, std::size_t bytes, int count) {
    Device& a = devices[src];
    Device& b = devices[dst];
    cudaStream_t forward = a.streams[0];
    cudaStream_t backward = src == dst ? a.streams[1] : b.streams[0];
    CHECK(cudaSetDevice(src));
    CHECK(cudaMemcpyPeerAsync(b.receive, dst, a.send, src, bytes, forward));   // warm-up
    CHECK(cudaSetDevice(dst));
    CHECK(cudaMemcpyPeerAsync(a.receive, src, b.send, dst, bytes, backward));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaSetDevice(src));
    CHECK(cudaDeviceSynchronize());

    hold_stream<<<1, 1, 0, forward>>>(a.hold_cycles);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(a.start, forward));
    CHECK(cudaStreamWaitEvent(backward, a.start, 0));
    for (int i = 0; i < count; ++i) CHECK(cudaMemcpyPeerAsync(b.receive, dst, a.send, src, bytes, forward));
    CHECK(cudaSetDevice(dst));
    for (int i = 0; i < count; ++i) CHECK(cudaMemcpyPeerAsync(a.receive, src, b.send, dst, bytes, backward));
    CHECK(cudaEventRecord(b.joined, backward));
    CHECK(cudaSetDevice(src));
    CHECK(cudaStreamWaitEvent(forward, b.joined, 0));
    CHECK(cudaEventRecord(a.stop, forward));
    return elapsed_ms(a) / count;
}

void measure_pair(int src, int dst, int p2p) {
    report("uni", src, dst, p2p, settings.bytes, one_way_ms(src, dst, settings.bytes, settings.repeats));
    report("bi", src, dst, p2p, 2 * settings.bytes, both_ways_ms(src, dst, settings.bytes, settings.repeats));
    report("lat", src, dst, p2p, settings.latency_bytes,
           one_way_ms(src, dst, settings.latency_bytes, settings.latency_repeats));
}

// Median of `settings.repeats` runs of a call that returns when its copy is complete, timed with
// events on the legacy default stream of the current device, as a caller of the call would see it.
template <class Copy>
float finished_copy_ms(Device& d, Copy copy) {
    copy();   // warm-up
    std::vector<float> times;
    for (int r = 0; r < settings.repeats; ++r) {
        CHECK(cudaEventRecord(d.start, 0));
        copy();
        CHECK(cudaEventRecord(d.stop, 0));
        times.push_back(elapsed_ms(d));
    }
    return median(times);
}

// Lesson 3's rule: copy_between_devices should cost no more than the runtime's own peer copy.
void measure_solution_copy() {
    const int src = 0, dst = 1;
    const int p2p = can_access(dst, src) || can_access(src, dst) ? 1 : 0;
    if (p2p) set_peer_access(src, dst, true);
    Device& a = devices[src];
    Device& b = devices[dst];
    const std::size_t bytes = settings.bytes;
    CHECK(cudaSetDevice(dst));
    const float solution = finished_copy_ms(b, [&] { CHECK(copy_between_devices(b.receive, dst, a.send, src, bytes)); });
    CHECK(cudaSetDevice(dst));
    const float runtime = finished_copy_ms(b, [&] {
        CHECK(cudaMemcpyPeerAsync(b.receive, dst, a.send, src, bytes, 0));
        CHECK(cudaStreamSynchronize(0));
    });
    report("solution-copy", src, dst, p2p, bytes, solution);
    report("memcpy-peer-async", src, dst, p2p, bytes, runtime);
    if (p2p) set_peer_access(src, dst, false);
}

std::size_t whole_number(const char* option, const char* text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || value == 0) {
        std::fprintf(stderr, "p2p-matrix: %s takes a whole number above 0, not '%s'\n", option, text);
        std::exit(2);
    }
    return static_cast<std::size_t>(value);
}

void read_settings(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--bytes" && has_value) settings.bytes = whole_number("--bytes", argv[++i]);
        else if (arg == "--repeats" && has_value) settings.repeats = int(whole_number("--repeats", argv[++i]));
        else if (arg == "--latency-repeats" && has_value)
            settings.latency_repeats = int(whole_number("--latency-repeats", argv[++i]));
        else {
            std::fprintf(stderr, "usage: p2p-matrix [--bytes B] [--repeats N] [--latency-repeats N]\n");
            std::exit(2);
        }
    }
    settings.bytes = std::max(settings.bytes, settings.latency_bytes);
}

}  // namespace

int main(int argc, char** argv) {
    read_settings(argc, argv);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    std::printf("p2p devices count=%d\n", count);
    devices.resize(count);
    for (int d = 0; d < count; ++d) set_up(d);
    for (int src = 0; src < count; ++src)
        for (int dst = 0; dst < count; ++dst)
            if (src != dst) std::printf("p2p access src=%d dst=%d can=%d\n", src, dst, can_access(src, dst) ? 1 : 0);

    // Peer access off first: every pair and each device with itself.
    for (int src = 0; src < count; ++src)
        for (int dst = 0; dst < count; ++dst) measure_pair(src, dst, 0);
    // Then on, for the pairs the driver lets peer; off again after each pair, so that every pair
    // is measured with only its own access open.
    for (int src = 0; src < count; ++src) {
        for (int dst = 0; dst < count; ++dst) {
            if (!can_access(src, dst)) continue;
            set_peer_access(src, dst, true);
            measure_pair(src, dst, 1);
            set_peer_access(src, dst, false);
        }
    }
    if (count >= 2) measure_solution_copy();
    else std::printf("p2p note pairs of GPUs and the solution's copy need 2 or more GPUs; this machine shows %d\n", count);

    for (int d = 0; d < count; ++d) tear_down(d);
    std::printf("p2p-done\n");
    return 0;
}
