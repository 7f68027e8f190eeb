// Measures what a host thread pays when it drives a GPU, on device 0: the fixed cost of small
// copies and memsets, back-to-back launches, how long each copy call holds the host with pinned and
// with pageable memory, and what pinning host memory costs. The same source runs on a real GPU (the
// wall clock and CUDA events) and on the simulator (its virtual host clock and modelled events);
// `mgpu bench host-costs` runs both and prints each figure with the ratio.
//
// Output: one line per measurement, `calib NAME bytes=B ms=T`, then `calib-done`. Names starting
// with `host-` are host time per call; the others are device time per operation from events.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_support.h"

#if defined(MGPU_SIMULATOR)
#include "mgpu/sim/control.h"
#endif

__global__ void tiny_kernel(int* p) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *p += 1;
}

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
constexpr int kRepeats = 7;

// The host's clock in ms: the wall clock on a GPU, the virtual host clock on the simulator (which
// models how long each call holds the host, not how long the simulator itself takes).
double host_ms() {
#if defined(MGPU_SIMULATOR)
    return mgpu::sim::host_now_us() / 1000.0;
#else
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
#endif
}

void report(const std::string& name, std::size_t bytes, double ms) {
    std::printf("calib %s bytes=%zu ms=%.6f\n", name.c_str(), bytes, ms);
    std::fflush(stdout);
}

std::string size_name(std::size_t bytes) {
    return bytes >= MiB ? std::to_string(bytes / MiB) + "MiB" : std::to_string(bytes / KiB) + "KiB";
}

template <class Work>
float median_of(int repeats, Work work) {
    std::vector<float> times;
    for (int r = 0; r < repeats; ++r) times.push_back(static_cast<float>(work()));
    return median(times);
}

struct Events {
    cudaEvent_t begin{}, end{};
    Events() {
        CHECK(cudaEventCreate(&begin));
        CHECK(cudaEventCreate(&end));
    }
    ~Events() {
        cudaEventDestroy(begin);
        cudaEventDestroy(end);
    }
    // Device time per operation of `count` operations queued back to back on `stream`.
    template <class Enqueue>
    double per_op_ms(cudaStream_t stream, int count, Enqueue enqueue) {
        for (int i = 0; i < count; ++i) enqueue();   // warm-up
        CHECK(cudaStreamSynchronize(stream));
        return median_of(kRepeats, [&] {
            CHECK(cudaEventRecord(begin, stream));
            for (int i = 0; i < count; ++i) enqueue();
            CHECK(cudaEventRecord(end, stream));
            CHECK(cudaEventSynchronize(end));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, begin, end));
            return ms / count;
        });
    }
};

// Host time per call of `count` calls in a row, from an idle device.
template <class Call>
double host_per_call_ms(int count, Call call) {
    call();
    CHECK(cudaDeviceSynchronize());
    return median_of(kRepeats, [&] {
        CHECK(cudaDeviceSynchronize());
        const double start = host_ms();
        for (int i = 0; i < count; ++i) call();
        const double ms = (host_ms() - start) / count;
        CHECK(cudaDeviceSynchronize());
        return ms;
    });
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Events events;

    const std::size_t big = 256 * MiB;
    void *dev_a = nullptr, *dev_b = nullptr, *pinned = nullptr;
    CHECK(cudaMalloc(&dev_a, big));
    CHECK(cudaMalloc(&dev_b, big));
    CHECK(cudaMemset(dev_a, 1, big));
    CHECK(cudaMemset(dev_b, 2, big));
    CHECK(cudaMallocHost(&pinned, big));
    std::memset(pinned, 3, big);
    std::vector<unsigned char> pageable(big, 4);
    int* counter = nullptr;
    CHECK(cudaMalloc(&counter, sizeof(int)));

    // ---- device time of small operations, back to back on one stream --------------------------
    for (std::size_t bytes : {4 * KiB, 64 * KiB, 256 * KiB, 1 * MiB}) {
        report("h2d-pinned-" + size_name(bytes), bytes, events.per_op_ms(stream, 32, [&] {
            CHECK(cudaMemcpyAsync(dev_a, pinned, bytes, cudaMemcpyHostToDevice, stream));
        }));
        report("d2h-pinned-" + size_name(bytes), bytes, events.per_op_ms(stream, 32, [&] {
            CHECK(cudaMemcpyAsync(pinned, dev_a, bytes, cudaMemcpyDeviceToHost, stream));
        }));
        report("d2d-" + size_name(bytes), bytes, events.per_op_ms(stream, 32, [&] {
            CHECK(cudaMemcpyAsync(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice, stream));
        }));
        report("memset-" + size_name(bytes), bytes, events.per_op_ms(stream, 32, [&] {
            CHECK(cudaMemsetAsync(dev_a, 5, bytes, stream));
        }));
    }
    report("memset-256MiB", big, events.per_op_ms(stream, 2, [&] { CHECK(cudaMemsetAsync(dev_a, 6, big, stream)); }));
    report("launch-back-to-back", 0, events.per_op_ms(stream, 500, [&] { tiny_kernel<<<1, 32, 0, stream>>>(counter); }));

    // ---- host time per call ----------------------------------------------------------------------
    report("host-launch-call", 0, host_per_call_ms(200, [&] { tiny_kernel<<<1, 32, 0, stream>>>(counter); }));
    report("host-event-record-call", 0, host_per_call_ms(200, [&] { CHECK(cudaEventRecord(events.begin, stream)); }));
    for (std::size_t bytes : {4 * KiB, 1 * MiB}) {
        const std::string size = size_name(bytes);
        report("host-memcpy-h2d-pinned-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpy(dev_a, pinned, bytes, cudaMemcpyHostToDevice));
        }));
        report("host-memcpy-d2h-pinned-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpy(pinned, dev_a, bytes, cudaMemcpyDeviceToHost));
        }));
        report("host-memcpy-h2d-pageable-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpy(dev_a, pageable.data(), bytes, cudaMemcpyHostToDevice));
        }));
        report("host-memcpy-d2h-pageable-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpy(pageable.data(), dev_a, bytes, cudaMemcpyDeviceToHost));
        }));
        report("host-memcpy-d2d-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice));
        }));
        report("host-memset-" + size, bytes, host_per_call_ms(20, [&] { CHECK(cudaMemset(dev_a, 7, bytes)); }));
        report("host-async-h2d-pinned-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpyAsync(dev_a, pinned, bytes, cudaMemcpyHostToDevice, stream));
        }));
        report("host-async-h2d-pageable-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpyAsync(dev_a, pageable.data(), bytes, cudaMemcpyHostToDevice, stream));
        }));
        report("host-async-d2h-pinned-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpyAsync(pinned, dev_a, bytes, cudaMemcpyDeviceToHost, stream));
        }));
        report("host-async-d2h-pageable-" + size, bytes, host_per_call_ms(20, [&] {
            CHECK(cudaMemcpyAsync(pageable.data(), dev_a, bytes, cudaMemcpyDeviceToHost, stream));
        }));
    }
    // 256 MiB: how long one async copy call holds the host, pinned against pageable.
    report("host-async-h2d-pinned-256MiB", big, host_per_call_ms(1, [&] {
        CHECK(cudaMemcpyAsync(dev_a, pinned, big, cudaMemcpyHostToDevice, stream));
    }));
    report("host-async-h2d-pageable-256MiB", big, host_per_call_ms(1, [&] {
        CHECK(cudaMemcpyAsync(dev_a, pageable.data(), big, cudaMemcpyHostToDevice, stream));
    }));
    report("host-async-d2h-pinned-256MiB", big, host_per_call_ms(1, [&] {
        CHECK(cudaMemcpyAsync(pinned, dev_a, big, cudaMemcpyDeviceToHost, stream));
    }));
    report("host-async-d2h-pageable-256MiB", big, host_per_call_ms(1, [&] {
        CHECK(cudaMemcpyAsync(pageable.data(), dev_a, big, cudaMemcpyDeviceToHost, stream));
    }));
    report("host-memcpy-h2d-pinned-256MiB", big, host_per_call_ms(1, [&] {
        CHECK(cudaMemcpy(dev_a, pinned, big, cudaMemcpyHostToDevice));
    }));
    report("host-memset-256MiB", big, host_per_call_ms(1, [&] { CHECK(cudaMemset(dev_a, 8, big)); }));
    // Behind device work already queued: a pageable copy waits for it, a pinned one does not.
    const int queued_copies = 8;
    const double work_ms = events.per_op_ms(stream, queued_copies, [&] {
        CHECK(cudaMemcpyAsync(dev_b, dev_a, big, cudaMemcpyDeviceToDevice, stream));
    }) * queued_copies;
    report("queued-work", big * queued_copies, work_ms);
    for (bool is_pinned : {true, false}) {
        void* host = is_pinned ? pinned : static_cast<void*>(pageable.data());
        report(std::string("host-async-h2d-") + (is_pinned ? "pinned" : "pageable") + "-256MiB-behind-work", big,
               median_of(kRepeats, [&] {
                   CHECK(cudaDeviceSynchronize());
                   for (int i = 0; i < queued_copies; ++i)
                       CHECK(cudaMemcpyAsync(dev_b, dev_a, big, cudaMemcpyDeviceToDevice, stream));
                   const double start = host_ms();
                   CHECK(cudaMemcpyAsync(dev_a, host, big, cudaMemcpyHostToDevice, stream));
                   const double ms = host_ms() - start;
                   CHECK(cudaStreamSynchronize(stream));
                   return ms;
               }));
    }

    // ---- pinning host memory ---------------------------------------------------------------------
    for (std::size_t bytes : {4 * MiB, 64 * MiB, 256 * MiB}) {
        const std::string size = size_name(bytes);
        std::vector<float> alloc_ms, free_ms, portable_ms, register_ms, unregister_ms;
        void* registered = std::aligned_alloc(4096, bytes);
        std::memset(registered, 9, bytes);
        for (int r = 0; r < 5; ++r) {
            void* p = nullptr;
            double start = host_ms();
            CHECK(cudaMallocHost(&p, bytes));
            alloc_ms.push_back(static_cast<float>(host_ms() - start));
            start = host_ms();
            CHECK(cudaFreeHost(p));
            free_ms.push_back(static_cast<float>(host_ms() - start));
            start = host_ms();
            CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
            portable_ms.push_back(static_cast<float>(host_ms() - start));
            CHECK(cudaFreeHost(p));
            start = host_ms();
            CHECK(cudaHostRegister(registered, bytes, cudaHostRegisterDefault));
            register_ms.push_back(static_cast<float>(host_ms() - start));
            start = host_ms();
            CHECK(cudaHostUnregister(registered));
            unregister_ms.push_back(static_cast<float>(host_ms() - start));
        }
        std::free(registered);
        report("host-mallochost-" + size, bytes, median(alloc_ms));
        report("host-freehost-" + size, bytes, median(free_ms));
        report("host-hostalloc-portable-" + size, bytes, median(portable_ms));
        report("host-hostregister-" + size, bytes, median(register_ms));
        report("host-hostunregister-" + size, bytes, median(unregister_ms));
    }

    CHECK(cudaFree(counter));
    CHECK(cudaFree(dev_a));
    CHECK(cudaFree(dev_b));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaStreamDestroy(stream));
    std::printf("calib-done\n");
    return 0;
}
