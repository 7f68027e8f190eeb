// Kernels run their threads on Boost.Context fibers: the guard must work when the fault
// happens on a fiber's stack, even one with almost no room left.
#include <doctest/doctest.h>

#include <alloca.h>
#include <signal.h>
#include <unistd.h>

#include <thread>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include "child_process.h"
#include "memory/memory.h"

namespace ctx = boost::context;
namespace mem = mgpu::sim::mem;
using memory_tests::run_in_child;

namespace {

constexpr std::size_t MiB = 1024 * 1024;

std::uint64_t device_bit(int device) { return std::uint64_t{1} << device; }

// Remembers where the fiber's stack ends so a test can use up nearly all of it.
struct RecordingStack {
    ctx::protected_fixedsize_stack inner;

    explicit RecordingStack(std::size_t bytes) : inner(bytes) {}
    ctx::stack_context allocate() {
        ctx::stack_context context = inner.allocate();
        // The size Boost reports includes the inaccessible page at the bottom.
        lowest_address = static_cast<char*>(context.sp) - context.size + sysconf(_SC_PAGESIZE);
        return context;
    }
    void deallocate(ctx::stack_context& context) noexcept { inner.deallocate(context); }

    static inline char* lowest_address = nullptr;
};

}  // namespace

TEST_CASE("a violation on a fiber's stack returns to run_guarded") {
    mem::reset({16 * MiB, 16 * MiB});
    char* own = static_cast<char*>(mem::device_alloc(0, 4096, {}));
    char* other = static_cast<char*>(mem::device_alloc(1, 4096, {"halo.cu", 7}));
    bool opened_own_on_fiber = false;
    bool reached_after = false;
    mem::Violation violation;
    const bool completed = mem::run_guarded(device_bit(0), [&] {
        ctx::fiber thread_fiber([&](ctx::fiber&& back) {
            static_cast<volatile char*>(own)[10] = 1;   // opens device 0 from the fiber
            opened_own_on_fiber = true;
            static_cast<volatile char*>(other)[20] = 1;
            reached_after = true;
            return std::move(back);
        });
        thread_fiber = std::move(thread_fiber).resume();
    }, &violation);
    CHECK_FALSE(completed);
    CHECK(opened_own_on_fiber);
    CHECK_FALSE(reached_after);
    CHECK(violation.owner_device == 1);
    CHECK(violation.address == other + 20);
    CHECK(violation.write);
    REQUIRE(violation.allocation.has_value());
    CHECK(violation.allocation->site.line == 7);

    // Fibers that finish normally still work afterwards, and the guard too.
    int finished = 0;
    CHECK(mem::run_guarded(device_bit(0), [&] {
        for (int i = 0; i < 3; ++i) {
            ctx::fiber f([&](ctx::fiber&& back) {
                static_cast<volatile char*>(own)[i] = 2;
                ++finished;
                return std::move(back);
            });
            f = std::move(f).resume();
        }
    }, nullptr));
    CHECK(finished == 3);
}

namespace {

// A kernel thread whose fiber stack has about 512 bytes left touches another device's memory.
// If the handler ran on the fiber's stack, its frame would land in the guard page below it
// and the kernel would kill the process.
bool violation_caught_with_fiber_stack_nearly_full() {
    mem::reset({16 * MiB, 16 * MiB});
    char* other = static_cast<char*>(mem::device_alloc(1, 4096, {}));
    mem::Violation violation;
    const bool completed = mem::run_guarded(device_bit(0), [&] {
        ctx::fiber thread_fiber(std::allocator_arg, RecordingStack(16 * 1024), [&](ctx::fiber&& back) {
            char* here = static_cast<char*>(__builtin_frame_address(0));
            const std::size_t room = static_cast<std::size_t>(here - RecordingStack::lowest_address);
            volatile char* filler = static_cast<char*>(alloca(room - 512));
            filler[0] = 0;
            static_cast<volatile char*>(other)[0] = 1;
            return std::move(back);
        });
        thread_fiber = std::move(thread_fiber).resume();
    }, &violation);
    return !completed && violation.owner_device == 1;
}

}  // namespace

TEST_CASE("the handler runs on its own stack when a fiber's stack is nearly used up") {
    SUBCASE("on the main thread") {
        const auto outcome = run_in_child([] {
            // Start like a thread nobody prepared: no alternate stack (the test framework has one).
            stack_t none{};
            none.ss_flags = SS_DISABLE;
            sigaltstack(&none, nullptr);
            _exit(violation_caught_with_fiber_stack_nearly_full() ? 0 : 1);
        });
        INFO(outcome.standard_error);
        CHECK_FALSE(outcome.killed_by_signal);
        CHECK(outcome.exit_code == 0);
    }
    SUBCASE("on a thread of its own") {
        const auto outcome = run_in_child([] {
            bool caught = false;
            std::thread([&] { caught = violation_caught_with_fiber_stack_nearly_full(); }).join();
            _exit(caught ? 0 : 1);
        });
        INFO(outcome.standard_error);
        CHECK_FALSE(outcome.killed_by_signal);
        CHECK(outcome.exit_code == 0);
    }
}
