// run_guarded: what a body may touch, what it may not, and what it leaves behind.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "child_process.h"
#include "memory/memory.h"

namespace mem = mgpu::sim::mem;
using memory_tests::run_in_child;

namespace {

constexpr std::size_t MiB = 1024 * 1024;

std::uint64_t device_bit(int device) { return std::uint64_t{1} << device; }

void write_byte(void* p, std::size_t offset, char value) { static_cast<volatile char*>(p)[offset] = value; }
char read_byte(const void* p, std::size_t offset) { return static_cast<const volatile char*>(p)[offset]; }

}  // namespace

TEST_CASE("a guarded body reads and writes the memory of its own device") {
    mem::reset({16 * MiB, 16 * MiB});
    auto* data = static_cast<int*>(mem::device_alloc(0, 4 * MiB, {}));
    REQUIRE(data != nullptr);
    const std::size_t count = 4 * MiB / sizeof(int);
    long long sum = 0;
    mem::Violation violation;
    const bool completed = mem::run_guarded(device_bit(0), [&] {
        for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<int>(i % 1000);
        for (std::size_t i = 0; i < count; ++i) sum += data[i];
    }, &violation);
    CHECK(completed);
    // 1048576 values cycling through 0..999: 1048 full cycles of 499500, then 0..575.
    CHECK(sum == 1048LL * 499500 + 575LL * 576 / 2);
    // The data survives closing and reopening.
    int last = 0;
    CHECK(mem::run_guarded(mem::kAllDevices, [&] { last = data[count - 1]; }, nullptr));
    CHECK(last == static_cast<int>((count - 1) % 1000));
}

TEST_CASE("touching another device's memory ends the body with a violation") {
    mem::reset({16 * MiB, 16 * MiB, 16 * MiB});
    void* own = mem::device_alloc(0, 4096, {});
    void* other = mem::device_alloc(2, 8192, {"peer_copy.cu", 64});
    REQUIRE(own != nullptr);
    REQUIRE(other != nullptr);

    SUBCASE("a write") {
        bool reached_after = false;
        mem::Violation violation;
        const bool completed = mem::run_guarded(device_bit(0) | device_bit(1), [&] {
            write_byte(own, 0, 1);
            write_byte(other, 100, 1);
            reached_after = true;
        }, &violation);
        CHECK_FALSE(completed);
        CHECK_FALSE(reached_after);
        CHECK(violation.address == static_cast<char*>(other) + 100);
        CHECK(violation.owner_device == 2);
        CHECK(violation.write);
        REQUIRE(violation.allocation.has_value());
        CHECK(violation.allocation->base == reinterpret_cast<std::uintptr_t>(other));
        CHECK(violation.allocation->size == 8192);
        CHECK(violation.allocation->device == 2);
        CHECK(violation.allocation->serial == 2);
        CHECK(violation.allocation->site.line == 64);
    }
    SUBCASE("a read outside any allocation") {
        mem::Violation violation;
        char* past_the_end = static_cast<char*>(other) + 3 * MiB;
        const bool completed = mem::run_guarded(device_bit(0), [&] { (void)read_byte(past_the_end, 0); }, &violation);
        CHECK_FALSE(completed);
        CHECK(violation.address == past_the_end);
        CHECK(violation.owner_device == 2);
        CHECK_FALSE(violation.write);
        CHECK_FALSE(violation.allocation.has_value());
    }
    // The guard still works after a violation (the handler's signal is unblocked again).
    for (int round = 0; round < 3; ++round) {
        mem::Violation violation;
        CHECK_FALSE(mem::run_guarded(device_bit(0), [&] { write_byte(other, 0, 1); }, &violation));
        CHECK(violation.owner_device == 2);
    }
    CHECK(mem::run_guarded(device_bit(2), [&] { write_byte(other, 0, 1); }, nullptr));
}

TEST_CASE("a bad access outside device memory ends the body with a violation of no device") {
    mem::reset({16 * MiB});
    const long page = sysconf(_SC_PAGESIZE);
    void* forbidden = mmap(nullptr, static_cast<std::size_t>(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(forbidden != MAP_FAILED);
    mem::Violation violation;
    CHECK_FALSE(mem::run_guarded(mem::kAllDevices, [&] { write_byte(forbidden, 8, 1); }, &violation));
    CHECK(violation.address == static_cast<char*>(forbidden) + 8);
    CHECK(violation.owner_device == -1);
    CHECK_FALSE(violation.allocation.has_value());
    munmap(forbidden, static_cast<std::size_t>(page));
}

TEST_CASE("an inner guarded body cannot use what the outer one opened") {
    mem::reset({16 * MiB, 16 * MiB});
    void* zero = mem::device_alloc(0, 4096, {});
    void* one = mem::device_alloc(1, 4096, {});
    bool inner_completed = true;
    mem::Violation inner_violation;
    const bool outer_completed = mem::run_guarded(mem::kAllDevices, [&] {
        write_byte(one, 0, 5);
        inner_completed = mem::run_guarded(device_bit(0), [&] {
            write_byte(zero, 0, 1);
            write_byte(one, 1, 1);
        }, &inner_violation);
        write_byte(one, 2, 7);   // the outer body may again
    }, nullptr);
    CHECK(outer_completed);
    CHECK_FALSE(inner_completed);
    CHECK(inner_violation.owner_device == 1);
    char values[3] = {};
    mem::run_guarded(device_bit(1), [&] {
        for (int i = 0; i < 3; ++i) values[i] = read_byte(one, static_cast<std::size_t>(i));
    }, nullptr);
    CHECK(values[0] == 5);
    CHECK(values[1] == 0);
    CHECK(values[2] == 7);
}

TEST_CASE("an exception from the body passes through and leaves memory closed") {
    mem::reset({16 * MiB});
    void* p = mem::device_alloc(0, 4096, {"kernel.cu", 9});
    CHECK_THROWS_AS(mem::run_guarded(mem::kAllDevices, [&] {
        write_byte(p, 0, 1);
        throw std::runtime_error("launch failed");
    }, nullptr), std::runtime_error);
    const auto outcome = run_in_child([&] { (void)read_byte(p, 0); });
    CHECK(outcome.killed_by_signal);
    CHECK(outcome.signal_number == SIGSEGV);
}

TEST_CASE("nothing stays open after a guarded body: host code touching device memory dies with a message") {
    mem::reset({16 * MiB, 16 * MiB});
    void* p = mem::device_alloc(1, 4096, {"saxpy.cu", 42});
    REQUIRE(p != nullptr);
    REQUIRE(mem::run_guarded(mem::kAllDevices, [&] { std::memset(p, 3, 4096); }, nullptr));

    SUBCASE("a read") {
        const auto outcome = run_in_child([&] { (void)read_byte(p, 16); });
        CHECK(outcome.killed_by_signal);
        CHECK(outcome.signal_number == SIGSEGV);
        INFO(outcome.standard_error);
        CHECK(outcome.standard_error.find("error: host code") != std::string::npos);
        CHECK(outcome.standard_error.find(" read device memory") != std::string::npos);
        CHECK(outcome.standard_error.find("byte 16 of a 4096-byte cudaMalloc allocation on device 1") != std::string::npos);
        CHECK(outcome.standard_error.find("(allocated at saxpy.cu:42)") != std::string::npos);
        CHECK(outcome.standard_error.find("cudaMemcpy") != std::string::npos);
    }
    SUBCASE("a write to freed memory") {
        mem::device_free(p);
        const auto outcome = run_in_child([&] { write_byte(p, 0, 1); });
        CHECK(outcome.killed_by_signal);
        CHECK(outcome.signal_number == SIGSEGV);
        INFO(outcome.standard_error);
        CHECK(outcome.standard_error.find("error: host code") != std::string::npos);
        CHECK(outcome.standard_error.find(" wrote to device memory") != std::string::npos);
        CHECK(outcome.standard_error.find("on device 1 outside every live cudaMalloc allocation") != std::string::npos);
    }
}

namespace {
void previous_handler(int, siginfo_t*, void*) {
    static const char text[] = "the previous handler ran\n";
    (void)!write(STDERR_FILENO, text, sizeof text - 1);
    _exit(42);
}
}  // namespace

TEST_CASE("faults outside device memory in host code go to the handler installed before") {
    const auto outcome = run_in_child([] {
        struct sigaction action {};
        action.sa_sigaction = previous_handler;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, nullptr);
        mem::reset({16 * MiB});
        void* forbidden = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        (void)read_byte(forbidden, 0);
    });
    CHECK_FALSE(outcome.killed_by_signal);
    CHECK(outcome.exit_code == 42);
    CHECK(outcome.standard_error == "the previous handler ran\n");
}

TEST_CASE("a handler installed after reset neither breaks the guard nor loses its own faults") {
    const auto outcome = run_in_child([] {
        mem::reset({16 * MiB, 16 * MiB});
        void* other = mem::device_alloc(1, 4096, {});
        struct sigaction action {};
        action.sa_sigaction = previous_handler;
        action.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &action, nullptr);
        mem::Violation violation;
        if (mem::run_guarded(device_bit(0), [&] { write_byte(other, 0, 1); }, &violation)) _exit(1);
        if (violation.owner_device != 1) _exit(2);
        void* forbidden = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        (void)read_byte(forbidden, 0);
    });
    CHECK_FALSE(outcome.killed_by_signal);
    CHECK(outcome.exit_code == 42);
    CHECK(outcome.standard_error == "the previous handler ran\n");
}

TEST_CASE("without a previous handler, an unrelated fault kills the process as usual") {
    const auto outcome = run_in_child([] {
        signal(SIGSEGV, SIG_DFL);
        mem::reset({16 * MiB});
        void* forbidden = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        (void)read_byte(forbidden, 0);
    });
    CHECK(outcome.killed_by_signal);
    CHECK(outcome.signal_number == SIGSEGV);
    CHECK(outcome.standard_error.empty());
}

TEST_CASE("guarded bodies on several threads at once") {
    mem::reset({64 * MiB, 64 * MiB});
    constexpr int kThreads = 4;
    constexpr std::size_t kSlice = 4 * MiB;
    auto* shared = static_cast<unsigned char*>(mem::device_alloc(0, kThreads * kSlice, {}));
    void* forbidden = mem::device_alloc(1, 4096, {});
    REQUIRE(shared != nullptr);
    std::atomic<int> completed_rounds{0};
    std::atomic<int> violations_seen{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                unsigned char* slice = shared + static_cast<std::size_t>(t) * kSlice;
                bool same = true;
                const bool ok = mem::run_guarded(device_bit(0), [&] {
                    // Other threads close what they opened while this one works: it must reopen.
                    for (std::size_t i = 0; i < kSlice; i += 4096) slice[i] = static_cast<unsigned char>(t + round);
                    for (std::size_t i = 0; i < kSlice; i += 4096) same = same && slice[i] == static_cast<unsigned char>(t + round);
                }, nullptr);
                if (ok && same) completed_rounds.fetch_add(1);
                mem::Violation violation;
                if (!mem::run_guarded(device_bit(0), [&] { write_byte(forbidden, 0, 1); }, &violation) &&
                    violation.owner_device == 1) {
                    violations_seen.fetch_add(1);
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    CHECK(completed_rounds.load() == kThreads * 20);
    CHECK(violations_seen.load() == kThreads * 20);
}

TEST_CASE("a sweep over 64 MiB opens memory a few times, not once per page") {
    mem::reset({256 * MiB});
    void* p = mem::device_alloc(0, 64 * MiB, {});
    REQUIRE(p != nullptr);
    for (int round = 0; round < 2; ++round) {
        const std::uint64_t before = mem::guard_openings();
        REQUIRE(mem::run_guarded(device_bit(0), [&] { std::memset(p, round + 1, 64 * MiB); }, nullptr));
        const std::uint64_t openings = mem::guard_openings() - before;
        // One opening per 2 MiB chunk would be 32.
        CHECK(openings >= 1);
        CHECK(openings <= 32);
    }
}

TEST_CASE("a body that scatters over more places than the guard tracks still works and still closes") {
    const std::size_t capacity = std::size_t{8} << 30;   // reserved, never committed
    mem::reset({capacity, 16 * MiB});
    auto* spread = static_cast<unsigned char*>(mem::device_alloc(0, capacity - 4 * MiB, {"scatter.cu", 3}));
    REQUIRE(spread != nullptr);
    constexpr std::size_t kStride = 4 * MiB;   // never adjacent to an opened chunk
    constexpr std::size_t kPlaces = 1500;
    REQUIRE(mem::run_guarded(device_bit(0), [&] { spread[kStride * 700 + 5] = 99; }, nullptr));
    unsigned sum = 0;
    // Reads of never-written memory map the zero page: this costs no RAM.
    const bool completed = mem::run_guarded(device_bit(0), [&] {
        for (std::size_t i = 0; i < kPlaces; ++i) sum += spread[kStride * i + 5];
    }, nullptr);
    CHECK(completed);
    CHECK(sum == 99);
    const auto outcome = run_in_child([&] { (void)read_byte(spread, kStride * 1400); });
    CHECK(outcome.killed_by_signal);
    CHECK(outcome.signal_number == SIGSEGV);
    CHECK(outcome.standard_error.find("cudaMalloc allocation on device 0 (allocated at scatter.cu:3)") != std::string::npos);
}
