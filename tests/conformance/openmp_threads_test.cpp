// lessons-1-2-4.md §1.3: the current device belongs to each host thread, OpenMP's included. A parallel
// region's master thread is the caller and keeps its device; the other threads start on device 0 and
// must call cudaSetDevice themselves, after which their allocations land on their own device.
#include <doctest/doctest.h>

#include <omp.h>

#include <atomic>
#include <thread>
#include <vector>

#include "conformance_support.h"
#include "ordered_pair.h"

TEST_CASE("in an OpenMP parallel region the master keeps its device and the other threads start on device 0") {
    conformance::use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(5) == cudaSuccess);
    constexpr int kThreads = 4;
    std::vector<int> seen(kThreads, -1);
    int team = 0;
#pragma omp parallel num_threads(kThreads)
    {
        const int me = omp_get_thread_num();
#pragma omp single
        team = omp_get_num_threads();
        cudaGetDevice(&seen[static_cast<std::size_t>(me)]);
    }
    REQUIRE(team == kThreads);
    CHECK(seen[0] == 5);
    for (int t = 1; t < kThreads; ++t) {
        CAPTURE(t);
        CHECK(seen[static_cast<std::size_t>(t)] == 0);
    }
}

TEST_CASE("OpenMP threads that set their own device allocate on it, and the caller's device stays") {
    conformance::use_machine("hgx-h200-8");
    REQUIRE(cudaSetDevice(2) == cudaSuccess);
    constexpr int kThreads = 8;
    std::vector<int> landed(kThreads, -1);
#pragma omp parallel num_threads(kThreads)
    {
        const int me = omp_get_thread_num();
        int previous = 0;
        cudaGetDevice(&previous);
        if (cudaSetDevice(me) == cudaSuccess) {
            void* buffer = nullptr;
            if (cudaMalloc(&buffer, 1024) == cudaSuccess) {
                cudaPointerAttributes attributes{};
                if (cudaPointerGetAttributes(&attributes, buffer) == cudaSuccess)
                    landed[static_cast<std::size_t>(me)] = attributes.device;
                cudaFree(buffer);
            }
        }
        cudaSetDevice(previous);   // the master thread is the caller: give its device back
    }
    for (int t = 0; t < kThreads; ++t) {
        CAPTURE(t);
        CHECK(landed[static_cast<std::size_t>(t)] == t);
    }
    int current = -1;
    CHECK(cudaGetDevice(&current) == cudaSuccess);
    CHECK(current == 2);
}

// Host order (docs/host-threads.md): OpenMP's synchronisation orders GPU work as the wall clock does.

TEST_CASE("work queued after a parallel region starts after the work of every thread of the region") {
    conformance::OrderedPair pair;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) pair.a_copies();
    }
    pair.b_records();
    pair.check();
}

TEST_CASE("work queued after an OpenMP barrier starts after every thread's work before it") {
    conformance::OrderedPair pair;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) pair.a_copies();
#pragma omp barrier
        if (omp_get_thread_num() == 0) pair.b_records();
    }
    pair.check();
}

TEST_CASE("work queued after the end of an omp for without nowait starts after every iteration's work") {
    conformance::OrderedPair pair;
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static, 1)
        for (int i = 0; i < 2; ++i)
            if (i == 1) pair.a_copies();
        if (omp_get_thread_num() == 0) pair.b_records();
    }
    pair.check();
}

TEST_CASE("work queued in a critical section starts after the work its last holder did in it") {
    conformance::OrderedPair pair;
    std::atomic<bool> a_inside{false};
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
#pragma omp critical
            {
                a_inside = true;
                pair.a_copies();
            }
        } else {
            while (!a_inside.load()) std::this_thread::yield();   // only makes the real-time order certain
#pragma omp critical
            pair.b_records();
        }
    }
    pair.check();
}
