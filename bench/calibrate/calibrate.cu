// Measures, with CUDA events, the operations the simulator's cost model covers, on device 0.
// The same source runs on a real GPU (real times) and on the simulator (modelled times, since
// the simulator's cudaEventElapsedTime reports its virtual clock); `mgpu bench calibrate` runs
// both and prints each figure side by side with the ratio.
//
// Output: one line per measurement, `calib NAME bytes=B ms=T`, then `calib-done`.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "bench_support.h"
#include "peer_access.h"

__global__ void scale_in_place(float* x, size_t n, float a) {
    size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void tiny_kernel(int* p) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *p += 1;
}

namespace {

constexpr int kRepeats = 5;
// Rounds of the interleaved groups: their medians are compared with each other, so they get more.
constexpr int kRounds = 15;

struct Timer {
    cudaEvent_t begin{}, end{};
    Timer() {
        CHECK(cudaEventCreate(&begin));
        CHECK(cudaEventCreate(&end));
    }
    ~Timer() {
        cudaEventDestroy(begin);
        cudaEventDestroy(end);
    }
    // One run of `work`, bracketed by events on `stream`.
    template <class Work>
    float once_ms(cudaStream_t stream, Work&& work) {
        CHECK(cudaEventRecord(begin, stream));
        work();
        CHECK(cudaEventRecord(end, stream));
        CHECK(cudaEventSynchronize(end));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, begin, end));
        return ms;
    }
    // Median over kRepeats of `work` enqueued on `stream`, after one warm-up run.
    template <class Work>
    float median_ms(cudaStream_t stream, Work work) {
        work();
        CHECK(cudaStreamSynchronize(stream));
        std::vector<float> times;
        for (int r = 0; r < kRepeats; ++r) times.push_back(once_ms(stream, work));
        return median(times);
    }
};

void report(const char* name, size_t bytes, float ms) {
    std::printf("calib %s bytes=%zu ms=%.6f\n", name, bytes, ms);
}

unsigned blocks_for(size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

// Host-side work timed with events on the legacy default stream: the events bracket the call and
// everything it waits for.
struct HostWork {
    const char* name;
    size_t bytes;
    std::function<void()> work;
};

// Each member once as a warm-up, then kRounds rounds running every member once in turn; reports each
// member's median.
void measure_in_rounds(Timer& timer, const std::vector<HostWork>& group) {
    for (const HostWork& member : group) member.work();
    CHECK(cudaDeviceSynchronize());
    std::vector<std::vector<float>> times(group.size());
    for (int round = 0; round < kRounds; ++round)
        for (size_t i = 0; i < group.size(); ++i) times[i].push_back(timer.once_ms(0, group[i].work));
    for (size_t i = 0; i < group.size(); ++i) report(group[i].name, group[i].bytes, median(times[i]));
}

}  // namespace

int main(int argc, char** argv) {
    // Sizes shrink with --small for quick runs on the simulator's host memory.
    const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
    const size_t copy_bytes = small ? (64u << 20) : (256u << 20);
    const size_t d2d_bytes = small ? (256u << 20) : (1u << 30);
    const size_t kernel_floats = d2d_bytes / sizeof(float);

    CHECK(cudaSetDevice(0));
    cudaStream_t stream, other;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    Timer timer;

    void* pinned = nullptr;
    CHECK(cudaMallocHost(&pinned, copy_bytes));
    std::vector<unsigned char> pageable(copy_bytes, 1);
    std::memset(pinned, 1, copy_bytes);
    void *dev_a = nullptr, *dev_b = nullptr;
    CHECK(cudaMalloc(&dev_a, d2d_bytes));
    CHECK(cudaMalloc(&dev_b, d2d_bytes));
    CHECK(cudaMemset(dev_a, 1, d2d_bytes));
    CHECK(cudaMemset(dev_b, 2, d2d_bytes));

    report("h2d-pinned", copy_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyAsync(dev_a, pinned, copy_bytes, cudaMemcpyHostToDevice, stream));
    }));
    report("h2d-pageable", copy_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyAsync(dev_a, pageable.data(), copy_bytes, cudaMemcpyHostToDevice, stream));
    }));
    report("d2h-pinned", copy_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyAsync(pinned, dev_a, copy_bytes, cudaMemcpyDeviceToHost, stream));
    }));
    report("d2h-pageable", copy_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyAsync(pageable.data(), dev_a, copy_bytes, cudaMemcpyDeviceToHost, stream));
    }));
    report("d2d", d2d_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyAsync(dev_b, dev_a, d2d_bytes, cudaMemcpyDeviceToDevice, stream));
    }));
    report("peer-same-device", d2d_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaMemcpyPeerAsync(dev_b, 0, dev_a, 0, d2d_bytes, stream));
    }));

    int* counter = nullptr;
    CHECK(cudaMalloc(&counter, sizeof(int)));
    const int launches = 1000;
    float launch_ms = timer.median_ms(stream, [&] {
        for (int i = 0; i < launches; ++i) tiny_kernel<<<1, 32, 0, stream>>>(counter);
    });
    report("launch-tiny-kernel", 0, launch_ms / launches);

    float* x = static_cast<float*>(dev_a);
    report("scale-kernel", 2 * kernel_floats * sizeof(float), timer.median_ms(stream, [&] {
        scale_in_place<<<blocks_for(kernel_floats, 256), 256, 0, stream>>>(x, kernel_floats, 1.0001f);
    }));

    // Copy and compute on two non-blocking streams: 10 memory-bound kernels on one, 4 pinned
    // device-to-host copies on the other. Overlap shows as a total near the longer of the two.
    const size_t overlap_floats = kernel_floats / 4;
    float kernels_alone = timer.median_ms(stream, [&] {
        for (int k = 0; k < 10; ++k)
            scale_in_place<<<blocks_for(overlap_floats, 256), 256, 0, stream>>>(x, overlap_floats, 1.0f);
    });
    float copies_alone = timer.median_ms(stream, [&] {
        for (int c = 0; c < 4; ++c)
            CHECK(cudaMemcpyAsync(pinned, dev_b, copy_bytes, cudaMemcpyDeviceToHost, stream));
    });
    cudaEvent_t joined;
    CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    float together = timer.median_ms(stream, [&] {
        CHECK(cudaEventRecord(joined, stream));
        CHECK(cudaStreamWaitEvent(other, joined, 0));
        for (int c = 0; c < 4; ++c)
            CHECK(cudaMemcpyAsync(pinned, dev_b, copy_bytes, cudaMemcpyDeviceToHost, other));
        for (int k = 0; k < 10; ++k)
            scale_in_place<<<blocks_for(overlap_floats, 256), 256, 0, stream>>>(x, overlap_floats, 1.0f);
        CHECK(cudaEventRecord(joined, other));
        CHECK(cudaStreamWaitEvent(stream, joined, 0));
    });
    report("overlap-kernels-alone", 0, kernels_alone);
    report("overlap-copies-alone", 4 * copy_bytes, copies_alone);
    report("overlap-together", 0, together);

    // A device-to-device copy beside a memory-bound kernel: both use the GPU's own memory, so
    // this shows whether they share its bandwidth (time near the sum) or overlap (near the max).
    void* dev_c = nullptr;
    CHECK(cudaMalloc(&dev_c, d2d_bytes));
    CHECK(cudaMemset(dev_c, 3, d2d_bytes));
    report("d2d-beside-kernel", d2d_bytes, timer.median_ms(stream, [&] {
        CHECK(cudaEventRecord(joined, stream));
        CHECK(cudaStreamWaitEvent(other, joined, 0));
        CHECK(cudaMemcpyAsync(dev_c, dev_b, d2d_bytes, cudaMemcpyDeviceToDevice, other));
        scale_in_place<<<blocks_for(kernel_floats, 256), 256, 0, stream>>>(x, kernel_floats, 1.0f);
        CHECK(cudaEventRecord(joined, other));
        CHECK(cudaStreamWaitEvent(stream, joined, 0));
    }));
    CHECK(cudaFree(dev_c));
    CHECK(cudaEventDestroy(joined));

    // The reference solution's hot paths, against plain runtime calls of the same size. Each group is
    // measured in rounds, every member once per round in turn, so that the GPU's clocks drifting during
    // the run touch all of them alike; a ratio of two medians taken minutes apart does not.
    const size_t floats = d2d_bytes / sizeof(float);
    float* src = static_cast<float*>(dev_a);
    float* dst = static_cast<float*>(dev_b);
    const size_t chunk = floats / 16;
    std::vector<HostWork> copies = {
        {"solution-copy", d2d_bytes, [&] { CHECK(copy_between_devices(dst, 0, src, 0, d2d_bytes)); }},
        {"plain-memcpy", d2d_bytes, [&] { CHECK(cudaMemcpy(dst, src, d2d_bytes, cudaMemcpyDeviceToDevice)); }},
        // copy_between_devices promises a finished copy when it returns; a device-to-device cudaMemcpy
        // may return before its bytes land. The same promise costs the same wait.
        {"plain-memcpy-complete", d2d_bytes, [&] {
             CHECK(cudaMemcpy(dst, src, d2d_bytes, cudaMemcpyDeviceToDevice));
             CHECK(cudaDeviceSynchronize());
         }},
    };
    measure_in_rounds(timer, copies);
    std::vector<HostWork> solution_kernels = {
        {"solution-scale", 2 * d2d_bytes, [&] { CHECK(scale_from_peer(dst, 0, src, 0, floats, 1.5f)); }},
        {"solution-pipeline", 2 * d2d_bytes, [&] { CHECK(pipelined_scale(dst, 0, src, 0, floats, chunk, 1.5f)); }},
        // The same work without the pipeline: the whole copy, then the whole kernel. On one device the
        // copy and the kernel share its memory, so this is what the pipeline is held against there.
        {"copy-then-scale", 2 * d2d_bytes, [&] {
             CHECK(copy_between_devices(dst, 0, src, 0, d2d_bytes));
             CHECK(scale_from_peer(dst, 0, dst, 0, floats, 1.5f));
         }},
    };
    measure_in_rounds(timer, solution_kernels);
    // Allocation is host time: the events bracket it on an idle device. Each size is measured on its
    // own: the driver reuses what the last free of the same size gave back, and alternating sizes
    // defeats that (on an H200, 16 MiB took twice as long between 1 GiB allocations).
    measure_in_rounds(timer, {{"malloc-free-16MiB", 16u << 20, [&] {
                                   void* p = nullptr;
                                   CHECK(cudaMalloc(&p, 16u << 20));
                                   CHECK(cudaFree(p));
                               }}});
    measure_in_rounds(timer, {{"malloc-free", d2d_bytes, [&] {
                                   void* p = nullptr;
                                   CHECK(cudaMalloc(&p, d2d_bytes));
                                   CHECK(cudaFree(p));
                               }}});

    CHECK(cudaFree(counter));
    CHECK(cudaFree(dev_a));
    CHECK(cudaFree(dev_b));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaStreamDestroy(other));
    std::printf("calib-done\n");
    return 0;
}
