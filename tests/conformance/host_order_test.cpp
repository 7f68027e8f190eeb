// Host synchronisation orders GPU work as the wall clock does (docs/host-threads.md): when one
// host thread waits for another (a join, a mutex handed over, a condition variable, a future of
// std::async, a POSIX barrier or semaphore, and a std::latch, std::barrier, std::promise's future,
// std::counting_semaphore or std::atomic wait that blocked), whatever the second thread then queues
// starts after everything the first had finished. Each case: thread A copies 64 MiB to the device
// and waits for the copy; the synchronisation under test orders thread B after A; B records an
// event. On a GPU the event can only come after the copy's end, so the time from the copy's start
// to B's event is at least the copy's own time. A thread created after such a point starts after it.
#include <doctest/doctest.h>

#include <pthread.h>
#include <semaphore.h>

#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <latch>
#include <semaphore>
#include <string>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "conformance_support.h"
#include "ordered_pair.h"

using conformance::kBytes;
using conformance::OrderedPair;

namespace {

// Holds the calling thread until `flag` is set, in a way no host-order rule sees (a spin on an
// atomic): the cases use it only to make one real-time order certain, never to order the clocks.
void spin_until(const std::atomic<bool>& flag) {
    while (!flag.load()) std::this_thread::yield();
}

// Holds the calling thread until thread `tid` sleeps in the kernel (state S in /proc): a thread that
// waits on a futex. The cases of the waits that block only when their condition is not met yet
// (docs/host-threads.md) use it to be sure that the waiter blocked before it is released.
void wait_until_asleep(pid_t tid) {
    const std::string stat = "/proc/self/task/" + std::to_string(tid) + "/stat";
    for (;;) {
        std::ifstream in(stat);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        const auto paren = text.rfind(')');
        if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S') return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// A's copy, then `release` once the main thread is asleep in `wait`; then B's event on the main thread.
template <typename Release, typename Wait>
void blocked_handover(Release&& release, Wait&& wait) {
    OrderedPair pair;
    const pid_t waiter = gettid();
    std::thread a([&] {
        pair.a_copies();
        wait_until_asleep(waiter);
        release();
    });
    wait();
    pair.b_records();
    a.join();
    pair.check();
}

}  // namespace

TEST_CASE("on every preset machine, work queued after a join starts after the joined thread's work") {
    for (const std::string& preset : conformance::kGpuPresets) {
        if (!conformance::use_machine_if_hostable(preset)) continue;
        CAPTURE(preset);
        OrderedPair pair(preset);
        std::thread a([&] { pair.a_copies(); });
        a.join();
        pair.b_records();
        pair.check();
    }
}

TEST_CASE("work queued after a std::latch wait that blocked starts after the work before the count_down") {
    std::latch done(1);
    blocked_handover([&] { done.count_down(); }, [&] { done.wait(); });
}

TEST_CASE("work queued after a std::barrier wait that blocked starts after the last arrival's work") {
    std::barrier meeting(2);
    blocked_handover([&] { meeting.arrive_and_drop(); }, [&] { meeting.arrive_and_wait(); });
}

TEST_CASE("work queued after a std::promise's future, waited for, starts after the work before set_value") {
    std::promise<void> promise;
    std::future<void> result = promise.get_future();
    blocked_handover([&] { promise.set_value(); }, [&] { result.get(); });
}

TEST_CASE("work queued after a std::counting_semaphore acquire that blocked starts after the release's work") {
    std::counting_semaphore<1> token(0);
    blocked_handover([&] { token.release(); }, [&] { token.acquire(); });
}

TEST_CASE("work queued after std::atomic::wait that blocked starts after the work before notify_one") {
    std::atomic<int> flag{0};
    blocked_handover(
        [&] {
            flag.store(1);
            flag.notify_one();
        },
        [&] { flag.wait(0); });
}

TEST_CASE("work queued after std::thread::join starts after the joined thread's work") {
    OrderedPair pair;
    std::thread a([&] { pair.a_copies(); });
    a.join();
    pair.b_records();
    pair.check();
}

TEST_CASE("work queued after a std::jthread's end of scope starts after its work") {
    OrderedPair pair;
    {
        std::jthread a([&] { pair.a_copies(); });
    }
    pair.b_records();
    pair.check();
}

TEST_CASE("work queued after pthread_join starts after the joined thread's work") {
    OrderedPair pair;
    pthread_t a{};
    auto body = [](void* raw) -> void* {
        static_cast<OrderedPair*>(raw)->a_copies();
        return nullptr;
    };
    REQUIRE(pthread_create(&a, nullptr, body, &pair) == 0);
    REQUIRE(pthread_join(a, nullptr) == 0);
    pair.b_records();
    pair.check();
}

TEST_CASE("a thread created after a join starts after the joined thread's work") {
    OrderedPair pair;
    std::thread a([&] { pair.a_copies(); });
    a.join();
    std::thread b([&] { pair.b_records(); });
    b.join();
    pair.check();
}

TEST_CASE("work queued after taking a mutex starts after the work its last holder did under it") {
    OrderedPair pair;
    std::mutex mutex;
    std::atomic<bool> a_holds{false};
    std::thread a([&] {
        std::lock_guard lock(mutex);
        a_holds = true;
        pair.a_copies();
    });
    spin_until(a_holds);
    {
        std::lock_guard lock(mutex);
        pair.b_records();
    }
    a.join();
    pair.check();
}

TEST_CASE("work queued after a condition variable's wait starts after the notifier's work") {
    OrderedPair pair;
    std::mutex mutex;
    std::condition_variable ready;
    bool done = false;
    std::thread a([&] {
        pair.a_copies();
        {
            std::lock_guard lock(mutex);
            done = true;
        }
        ready.notify_one();
    });
    {
        std::unique_lock lock(mutex);
        ready.wait(lock, [&] { return done; });
    }
    pair.b_records();
    a.join();
    pair.check();
}

TEST_CASE("work queued after std::async's future is ready starts after the task's work") {
    OrderedPair pair;
    std::future<void> task = std::async(std::launch::async, [&] { pair.a_copies(); });
    task.get();
    pair.b_records();
    pair.check();
}

TEST_CASE("work queued after a POSIX barrier starts after every thread's work before it") {
    OrderedPair pair;
    pthread_barrier_t barrier;
    REQUIRE(pthread_barrier_init(&barrier, nullptr, 2) == 0);
    std::thread a([&] {
        pair.a_copies();
        pthread_barrier_wait(&barrier);
    });
    pthread_barrier_wait(&barrier);
    pair.b_records();
    a.join();
    pthread_barrier_destroy(&barrier);
    pair.check();
}

TEST_CASE("work queued after sem_wait starts after the work before the matching sem_post") {
    OrderedPair pair;
    sem_t posted;
    REQUIRE(sem_init(&posted, 0, 0) == 0);
    std::thread a([&] {
        pair.a_copies();
        sem_post(&posted);
    });
    REQUIRE(sem_wait(&posted) == 0);
    pair.b_records();
    a.join();
    sem_destroy(&posted);
    pair.check();
}

TEST_CASE("threads that nothing orders keep their own times: two threads' copies overlap") {
    // The opposite guard: carrying clocks must not serialise work the program left unordered.
    conformance::use_machine("hgx-h200-8");
    constexpr int kThreads = 2;
    std::vector<void*> host(kThreads, nullptr);
    std::vector<void*> device(kThreads, nullptr);
    std::vector<cudaEvent_t> start(kThreads), end(kThreads);
    std::vector<float> ms(kThreads, 0);
    std::atomic<int> ready{0};
    auto copy_on = [&](int d) {
        cudaSetDevice(d);
        cudaMallocHost(&host[d], kBytes);
        cudaMalloc(&device[d], kBytes);
        cudaEventCreate(&start[d]);
        cudaEventCreate(&end[d]);
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        cudaEventRecord(start[d], nullptr);
        cudaMemcpyAsync(device[d], host[d], kBytes, cudaMemcpyHostToDevice, nullptr);
        cudaEventRecord(end[d], nullptr);
        cudaEventSynchronize(end[d]);
        cudaEventElapsedTime(&ms[d], start[d], end[d]);
    };
    std::vector<std::thread> threads;
    for (int d = 0; d < kThreads; ++d) threads.emplace_back(copy_on, d);
    for (auto& thread : threads) thread.join();
#if !defined(MGPU_CONFORMANCE_REAL_GPU)
    // Both copies began at about the same modelled time: neither waited for the other.
    const auto copies = conformance::ops_of_kind(mgpu::trace::OpKind::MemcpyHtoD);
    REQUIRE(copies.size() >= 2);
    const auto& first = copies[copies.size() - 2];
    const auto& second = copies[copies.size() - 1];
    CHECK(second.start_us < first.end_us);
    CHECK(first.start_us < second.end_us);
#endif
    for (int d = 0; d < kThreads; ++d) {
        cudaSetDevice(d);
        CHECK(ms[d] > 0.5f);
        cudaEventDestroy(start[d]);
        cudaEventDestroy(end[d]);
        cudaFree(device[d]);
        cudaFreeHost(host[d]);
    }
}
