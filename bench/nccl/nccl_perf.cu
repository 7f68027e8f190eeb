// NCCL collectives measured the way nccl-tests measures them: one process, every GPU a rank
// driven from one thread inside groups, a range of sizes, out-of-place and in-place, time per
// operation from CUDA events on rank 0's stream, algorithm bandwidth (bytes / time) and bus
// bandwidth (algbw times the collective's factor, nccl-tests' doc/PERFORMANCE.md), and the number
// of wrong elements against a host computation.
//
// On the simulator the times are the modelled ones (NCCL's tuning model over the machine's
// links). Sizes above --check-up-to are timed without moving the data, so that 1 GiB on eight
// ranks needs no 16 GiB of memory; their #wrong column shows "-".
//
//   nccl_perf [--op all_reduce|all_gather|reduce_scatter|broadcast|sendrecv|all] [-b BYTES] [-e BYTES]
//             [-f FACTOR] [-g GPUS] [-n ITERS] [--check-up-to BYTES]
//   nccl_perf --speed BYTES   the simulator's own speed: the wall time of one all-reduce of BYTES per rank
//                             against a plain memcpy of the same total bytes (target: at most 3 times)
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if __has_include("mgpu/sim/nccl_control.h")
#include "mgpu/sim/control.h"
#include "mgpu/sim/nccl_control.h"
#define NCCL_PERF_ON_SIMULATOR 1
#endif

namespace {

struct Settings {
    std::string op = "all";
    std::size_t min_bytes = 8;
    std::size_t max_bytes = std::size_t{1} << 30;
    std::size_t factor = 4;
    int gpus = 0;
    int iterations = 5;
    std::size_t check_up_to = std::size_t{64} << 20;
    std::size_t speed_bytes = 0;
};

std::size_t parse_bytes(const char* text) {
    char* end = nullptr;
    double value = std::strtod(text, &end);
    switch (end && *end ? *end : ' ') {
    case 'K': case 'k': value *= 1024; break;
    case 'M': case 'm': value *= 1024.0 * 1024; break;
    case 'G': case 'g': value *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return static_cast<std::size_t>(value);
}

Settings parse(int argc, char** argv) {
    Settings s;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string name = argv[i];
        const char* value = argv[i + 1];
        if (name == "--op") s.op = value;
        else if (name == "-b") s.min_bytes = parse_bytes(value);
        else if (name == "-e") s.max_bytes = parse_bytes(value);
        else if (name == "-f") s.factor = std::strtoul(value, nullptr, 10);
        else if (name == "-g") s.gpus = std::atoi(value);
        else if (name == "-n") s.iterations = std::atoi(value);
        else if (name == "--check-up-to") s.check_up_to = parse_bytes(value);
        else if (name == "--speed") s.speed_bytes = parse_bytes(value);
        else {
            std::fprintf(stderr, "nccl_perf: unknown option %s\n", name.c_str());
            std::exit(2);
        }
    }
    if (s.factor < 2) s.factor = 2;
    return s;
}

#define CHECK_CUDA(call)                                                                          \
    do {                                                                                          \
        cudaError_t status_ = (call);                                                             \
        if (status_ != cudaSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(status_)); \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)
#define CHECK_NCCL(call)                                                                          \
    do {                                                                                          \
        ncclResult_t status_ = (call);                                                            \
        if (status_ != ncclSuccess) {                                                             \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(status_)); \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

enum class Collective { AllReduce, AllGather, ReduceScatter, Broadcast, SendRecv };

struct Shape {
    const char* name;
    Collective kind;
    // Bus bandwidth over algorithm bandwidth, for n ranks.
    double bus_factor(int n) const {
        switch (kind) {
        case Collective::AllReduce: return 2.0 * (n - 1) / n;
        case Collective::AllGather:
        case Collective::ReduceScatter: return static_cast<double>(n - 1) / n;
        default: return 1.0;
        }
    }
    bool per_rank_count() const { return kind == Collective::AllGather || kind == Collective::ReduceScatter; }
};

const Shape kShapes[] = {{"all_reduce", Collective::AllReduce},
                         {"all_gather", Collective::AllGather},
                         {"reduce_scatter", Collective::ReduceScatter},
                         {"broadcast", Collective::Broadcast},
                         {"sendrecv", Collective::SendRecv}};

struct Rank {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    float* send = nullptr;
    float* recv = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Rank r's input element i: small integers, so every sum is exact in float.
float input(int r, std::size_t i) { return static_cast<float>((r + 1) * ((i % 13) + 1) % 17); }

void launch(const Shape& shape, std::vector<Rank>& ranks, std::size_t count, bool in_place) {
    const int n = static_cast<int>(ranks.size());
    // A rank that sends from the buffer it receives into has no defined result.
    if (shape.kind == Collective::SendRecv) in_place = false;
    CHECK_NCCL(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
        Rank& rank = ranks[r];
        // In place: the input is where the output goes (rank's block for gathers and scatters).
        float* recv = rank.recv;
        const float* send = in_place ? (shape.kind == Collective::AllGather ? recv + r * count : recv) : rank.send;
        switch (shape.kind) {
        case Collective::AllReduce:
            CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, rank.comm, rank.stream));
            break;
        case Collective::AllGather:
            CHECK_NCCL(ncclAllGather(send, recv, count, ncclFloat32, rank.comm, rank.stream));
            break;
        case Collective::ReduceScatter:
            if (in_place) send = rank.recv, recv = rank.recv + r * count;
            CHECK_NCCL(ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, rank.comm, rank.stream));
            break;
        case Collective::Broadcast:
            CHECK_NCCL(ncclBroadcast(send, recv, count, ncclFloat32, 0, rank.comm, rank.stream));
            break;
        case Collective::SendRecv:
            CHECK_NCCL(ncclSend(send, count, ncclFloat32, (r + 1) % n, rank.comm, rank.stream));
            CHECK_NCCL(ncclRecv(recv, count, ncclFloat32, (r + n - 1) % n, rank.comm, rank.stream));
            break;
        }
    }
    CHECK_NCCL(ncclGroupEnd());
}

// Inputs for one run: each rank's send buffer, and its receive buffer (the in-place input).
void fill(const Shape& shape, std::vector<Rank>& ranks, std::size_t count) {
    const int n = static_cast<int>(ranks.size());
    const std::size_t length = shape.per_rank_count() ? count * n : count;
    for (int r = 0; r < n; ++r) {
        std::vector<float> values(length);
        for (std::size_t i = 0; i < length; ++i) values[i] = input(r, i);
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaMemcpy(ranks[r].send, values.data(), length * sizeof(float), cudaMemcpyHostToDevice));
        if (shape.kind == Collective::AllGather) {
            // In place, the input is block r of the receive buffer.
            CHECK_CUDA(cudaMemcpy(ranks[r].recv + r * count, values.data(), count * sizeof(float),
                                  cudaMemcpyHostToDevice));
        } else {
            CHECK_CUDA(cudaMemcpy(ranks[r].recv, values.data(), length * sizeof(float), cudaMemcpyHostToDevice));
        }
    }
}

long long wrong_elements(const Shape& shape, std::vector<Rank>& ranks, std::size_t count, bool in_place) {
    const int n = static_cast<int>(ranks.size());
    long long wrong = 0;
    for (int r = 0; r < n; ++r) {
        const std::size_t length = shape.kind == Collective::AllGather ? count * n : count;
        const float* at = ranks[r].recv + (in_place && shape.kind == Collective::ReduceScatter ? r * count : 0);
        if (shape.kind == Collective::SendRecv) at = ranks[r].recv;
        std::vector<float> got(length);
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaMemcpy(got.data(), at, length * sizeof(float), cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < length; ++i) {
            float expected = 0;
            switch (shape.kind) {
            case Collective::AllReduce:
                for (int k = 0; k < n; ++k) expected += input(k, i);
                break;
            case Collective::AllGather: expected = input(static_cast<int>(i / count), i % count); break;
            case Collective::ReduceScatter:
                for (int k = 0; k < n; ++k) expected += input(k, r * count + i);
                break;
            case Collective::Broadcast: expected = input(0, i); break;
            case Collective::SendRecv: expected = input((r + n - 1) % n, i); break;
            }
            wrong += got[i] != expected;
        }
    }
    return wrong;
}

// Modelled (or, on a GPU, measured) microseconds per operation.
double time_us(const Shape& shape, std::vector<Rank>& ranks, std::size_t count, bool in_place, int iterations) {
    launch(shape, ranks, count, in_place);   // warm-up
    const int n = static_cast<int>(ranks.size());
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaEventRecord(ranks[r].start, ranks[r].stream));
    }
    for (int i = 0; i < iterations; ++i) launch(shape, ranks, count, in_place);
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaEventRecord(ranks[r].stop, ranks[r].stream));
    }
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamSynchronize(ranks[r].stream));
    }
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, ranks[0].start, ranks[0].stop));
    return ms * 1e3 / iterations;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall time of the simulator moving an all-reduce's data, against memcpy moving as many bytes.
int speed(const Settings& settings, int n) {
    const std::size_t count = settings.speed_bytes / sizeof(float);
    std::vector<ncclComm_t> comms(n);
    CHECK_NCCL(ncclCommInitAll(comms.data(), n, nullptr));
    std::vector<float*> buffers(n);
    for (int r = 0; r < n; ++r) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaMalloc(&buffers[r], count * sizeof(float)));
        CHECK_CUDA(cudaMemset(buffers[r], 0, count * sizeof(float)));   // pages touched before timing
    }
    auto all_reduce = [&] {
        CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < n; ++r)
            CHECK_NCCL(ncclAllReduce(buffers[r], buffers[r], count, ncclFloat32, ncclSum, comms[r], nullptr));
        CHECK_NCCL(ncclGroupEnd());
        for (int r = 0; r < n; ++r) {
            CHECK_CUDA(cudaSetDevice(r));
            CHECK_CUDA(cudaDeviceSynchronize());
        }
        return 0;
    };
    if (all_reduce() != 0) return 1;   // warm-up
    auto start = std::chrono::steady_clock::now();
    if (all_reduce() != 0) return 1;
    const double simulated = seconds_since(start);
    std::vector<char> from(settings.speed_bytes, 1), to(settings.speed_bytes, 0);
    start = std::chrono::steady_clock::now();
    for (int r = 0; r < n; ++r) std::memcpy(to.data(), from.data(), from.size());
    const double copied = seconds_since(start);
    const double ratio = simulated / copied;
    std::printf("# simulator speed: all-reduce of %zu B on %d ranks took %.3f s; memcpy of %d x %zu B took %.3f s; "
                "ratio %.2f (target <= 3): %s\n",
                settings.speed_bytes, n, simulated, n, settings.speed_bytes, copied, ratio, ratio <= 3 ? "PASS" : "MISS");
    for (int r = 0; r < n; ++r) {
        ncclCommDestroy(comms[r]);
        cudaFree(buffers[r]);
    }
    return ratio <= 3 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const Settings settings = parse(argc, argv);
    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    const int n = settings.gpus > 0 ? std::min(settings.gpus, devices) : devices;
    int version = 0;
    ncclGetVersion(&version);
    std::printf("# nccl_perf: %d rank(s), one thread, NCCL %d", n, version);
#ifdef NCCL_PERF_ON_SIMULATOR
    std::printf(", simulated machine '%s' (modelled times)", mgpu::sim::machine().name.c_str());
#endif
    std::printf("\n");
    if (settings.speed_bytes > 0) return speed(settings, n);
    std::vector<Rank> ranks(n);
    std::vector<ncclComm_t> comms(n);
    CHECK_NCCL(ncclCommInitAll(comms.data(), n, nullptr));
    const std::size_t max_elements = settings.max_bytes / sizeof(float);
    for (int r = 0; r < n; ++r) {
        cudaDeviceProp prop{};
        CHECK_CUDA(cudaGetDeviceProperties(&prop, r));
        std::printf("#  Rank %2d device %d [%s]\n", r, r, prop.name);
        ranks[r].comm = comms[r];
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking));
        // Gathers and scatters hold n blocks of the per-rank count.
        CHECK_CUDA(cudaMalloc(&ranks[r].send, (max_elements + n) * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&ranks[r].recv, (max_elements + n) * sizeof(float)));
        CHECK_CUDA(cudaEventCreate(&ranks[r].start));
        CHECK_CUDA(cudaEventCreate(&ranks[r].stop));
    }
    double bus_sum = 0;
    int rows = 0;
    std::string device_notes;
    for (const Shape& shape : kShapes) {
        if (settings.op != "all" && settings.op != shape.name) continue;
        if (shape.kind == Collective::SendRecv && n < 2) continue;
        std::printf("#\n# %s\n", shape.name);
        std::printf("#%11s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s\n", "size", "count", "type", "redop",
                    "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
        std::printf("#%11s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s\n", "(B)", "(elements)", "", "", "",
                    "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
        for (std::size_t bytes = settings.min_bytes; bytes <= settings.max_bytes; bytes *= settings.factor) {
            // nccl-tests' size is the whole buffer: per-rank counts are size / (n * 4) for gathers.
            std::size_t count = bytes / sizeof(float);
            if (shape.per_rank_count()) count /= n;
            if (count == 0) continue;
            const std::size_t size = (shape.per_rank_count() ? count * n : count) * sizeof(float);
            const bool check = size <= settings.check_up_to;
#ifdef NCCL_PERF_ON_SIMULATOR
            mgpu::sim::set_nccl_data_movement(check);
#endif
            std::printf(" %11zu %12zu %8s %6s %6s", size, shape.per_rank_count() ? count * n : count, "float",
                        shape.kind == Collective::AllReduce || shape.kind == Collective::ReduceScatter ? "sum" : "none",
                        shape.kind == Collective::Broadcast ? "0" : "-1");
            for (bool in_place : {false, true}) {
                if (check) fill(shape, ranks, count);
                // One checked run, then the timed ones.
                long long wrong = -1;
                if (check) {
                    launch(shape, ranks, count, in_place);
                    wrong = wrong_elements(shape, ranks, count, in_place);
                }
                const double us = time_us(shape, ranks, count, in_place, settings.iterations);
                const double algbw = static_cast<double>(size) / (us * 1e3);
                const double busbw = algbw * shape.bus_factor(n);
                if (check) std::printf(" %9.2f %7.2f %7.2f %6lld", us, algbw, busbw, wrong);
                else std::printf(" %9.2f %7.2f %7.2f %6s", us, algbw, busbw, "-");
                bus_sum += busbw;
                ++rows;
            }
            std::printf("\n");
#ifdef NCCL_PERF_ON_SIMULATOR
            // What the device spends on one operation (the trace's last part), without the host's issue time.
            for (auto it = mgpu::sim::trace().ops.rbegin(); it != mgpu::sim::trace().ops.rend(); ++it)
                if (it->kind == mgpu::trace::OpKind::Collective) {
                    char line[160];
                    std::snprintf(line, sizeof line, "#  %11zu B: %10.2f us on the device (%s)\n", size,
                                  it->end_us - it->start_us, it->name.substr(it->name.rfind(' ') + 1).c_str());
                    device_notes += line;
                    break;
                }
#endif
        }
        if (!device_notes.empty()) std::printf("# device time per operation, from the trace:\n%s", device_notes.c_str());
        device_notes.clear();
    }
    std::printf("#\n# Avg bus bandwidth    : %g\n#\n", rows ? bus_sum / rows : 0.0);
    for (Rank& rank : ranks) {
        ncclCommDestroy(rank.comm);
        cudaFree(rank.send);
        cudaFree(rank.recv);
        cudaStreamDestroy(rank.stream);
        cudaEventDestroy(rank.start);
        cudaEventDestroy(rank.stop);
    }
    return 0;
}
