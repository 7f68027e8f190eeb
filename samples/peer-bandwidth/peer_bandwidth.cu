// peer-bandwidth: the measuring pattern of NVIDIA's p2pBandwidthLatencyTest, written for these samples.
// For every ordered pair of GPUs, with peer access off and then on where the pair allows it, a
// spinning kernel (it polls a flag in page-locked host memory through a volatile pointer) holds the
// stream while every copy is queued behind it, so that the events time the copies alone; then the
// host raises the flag. Copies with peer access on go through a copy kernel sized by the occupancy
// API, as the sample's SM copy does. Prints the bandwidth and latency matrices, and exits 1 when a
// pair that can peer is not faster with access on than off, in bandwidth or in the latency of
// 4-byte copies (without access those are staged through host memory), else 0.
#include <cstdio>
#include <vector>

#include "sample_helpers.h"

namespace {

constexpr std::size_t kBytes = std::size_t{16} << 20;
constexpr int kRepeat = 5;

}  // namespace

// Spins until the host sets *flag, or until timeout_clocks have passed on the device clock.
__global__ void delay(volatile int* flag, unsigned long long timeout_clocks = 10000000)
{
    const long long start = clock64();
    while (*flag == 0) {
        if (clock64() - start > static_cast<long long>(timeout_clocks)) break;
    }
}

__global__ void copy_words(int4* __restrict__ destination, const int4* __restrict__ source, std::size_t count)
{
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
        destination[i] = source[i];
}

struct Pair {
    int from, to;
};

// Milliseconds for kRepeat copies of `bytes` from device `from` to device `to`, timed on `from`.
float time_copies(const Pair& pair, void* destination, const void* source, std::size_t bytes, bool kernel_copy,
                  volatile int* flag, cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop)
{
    checkSample(cudaSetDevice(pair.from));
    *flag = 0;
    delay<<<1, 1, 0, stream>>>(flag);
    checkLastSample("delay");
    checkSample(cudaEventRecord(start, stream));
    int blocks = 0, threads = 0;
    if (kernel_copy) checkSample(cudaOccupancyMaxPotentialBlockSize(&blocks, &threads, copy_words));
    for (int r = 0; r < kRepeat; ++r) {
        if (kernel_copy)
            copy_words<<<blocks, threads, 0, stream>>>(static_cast<int4*>(destination),
                                                       static_cast<const int4*>(source), bytes / sizeof(int4));
        else
            checkSample(cudaMemcpyPeerAsync(destination, pair.to, source, pair.from, bytes, stream));
    }
    checkSample(cudaEventRecord(stop, stream));
    *flag = 1;
    checkSample(cudaStreamSynchronize(stream));
    float ms = 0;
    checkSample(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

int main()
{
    int gpus = 0;
    checkSample(cudaGetDeviceCount(&gpus));
    std::printf("[peer-bandwidth]\n%d GPU(s)\n", gpus);
    int* flag = nullptr;
    checkSample(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocPortable));

    std::vector<void*> buffers(gpus);
    std::vector<cudaStream_t> streams(gpus);
    std::vector<cudaEvent_t> starts(gpus), stops(gpus);
    for (int g = 0; g < gpus; ++g) {
        checkSample(cudaSetDevice(g));
        checkSample(cudaMalloc(&buffers[g], 2 * kBytes));
        checkSample(cudaMemset(buffers[g], g, 2 * kBytes));
        checkSample(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking));
        checkSample(cudaEventCreate(&starts[g]));
        checkSample(cudaEventCreate(&stops[g]));
    }

    std::printf("P2P Connectivity Matrix\n     D\\D");
    for (int b = 0; b < gpus; ++b) std::printf("%6d", b);
    std::printf("\n");
    std::vector<int> can(gpus * gpus, 0);
    for (int a = 0; a < gpus; ++a) {
        std::printf("%6d   ", a);
        for (int b = 0; b < gpus; ++b) {
            if (a != b) checkSample(cudaDeviceCanAccessPeer(&can[a * gpus + b], a, b));
            std::printf("%6d", a == b ? 1 : can[a * gpus + b]);
        }
        std::printf("\n");
    }

    bool faster_with_peer_access = true;
    std::vector<double> off(gpus * gpus), on(gpus * gpus), latency(gpus * gpus), latency_on(gpus * gpus);
    for (int a = 0; a < gpus; ++a)
        for (int b = 0; b < gpus; ++b) {
            const Pair pair{a, b};
            void* source = buffers[a];
            void* destination = static_cast<char*>(buffers[b]) + (a == b ? kBytes : 0);
            const float plain = time_copies(pair, destination, source, kBytes, false, flag, streams[a], starts[a], stops[a]);
            off[a * gpus + b] = kRepeat * static_cast<double>(kBytes) / (plain * 1e-3) / 1e9;
            const float tiny = time_copies(pair, destination, source, 4, false, flag, streams[a], starts[a], stops[a]);
            latency[a * gpus + b] = tiny * 1e3 / kRepeat;
            on[a * gpus + b] = off[a * gpus + b];
            latency_on[a * gpus + b] = latency[a * gpus + b];
            if (a != b && can[a * gpus + b]) {
                checkSample(cudaSetDevice(a));
                checkSample(cudaDeviceEnablePeerAccess(b, 0));
                const float direct = time_copies(pair, destination, source, kBytes, true, flag, streams[a], starts[a], stops[a]);
                const float tiny_direct = time_copies(pair, destination, source, 4, false, flag, streams[a], starts[a], stops[a]);
                checkSample(cudaDeviceDisablePeerAccess(b));
                on[a * gpus + b] = kRepeat * static_cast<double>(kBytes) / (direct * 1e-3) / 1e9;
                latency_on[a * gpus + b] = tiny_direct * 1e3 / kRepeat;
                if (!(on[a * gpus + b] > off[a * gpus + b])) faster_with_peer_access = false;
                if (!(latency_on[a * gpus + b] < latency[a * gpus + b])) faster_with_peer_access = false;
            }
        }

    const auto print = [&](const char* title, const std::vector<double>& values, const char* format) {
        std::printf("%s\n   D\\D", title);
        for (int b = 0; b < gpus; ++b) std::printf("%8d", b);
        std::printf("\n");
        for (int a = 0; a < gpus; ++a) {
            std::printf("%6d ", a);
            for (int b = 0; b < gpus; ++b) std::printf(format, values[a * gpus + b]);
            std::printf("\n");
        }
    };
    print("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)", off, "%8.2f");
    print("Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)", on, "%8.2f");
    print("P2P=Disabled Latency Matrix (us)", latency, "%8.2f");
    print("P2P=Enabled Latency Matrix (us)", latency_on, "%8.2f");

    for (int g = 0; g < gpus; ++g) {
        checkSample(cudaSetDevice(g));
        checkSample(cudaEventDestroy(starts[g]));
        checkSample(cudaEventDestroy(stops[g]));
        checkSample(cudaStreamDestroy(streams[g]));
        checkSample(cudaFree(buffers[g]));
    }
    checkSample(cudaFreeHost(flag));
    std::printf("%s\n", faster_with_peer_access ? "Test passed" : "Test failed: a peer pair was not faster with access on");
    return faster_with_peer_access ? EXIT_SUCCESS : EXIT_FAILURE;
}
