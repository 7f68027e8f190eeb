// Runs the blocks of a grid: the threads of a block as plain calls inside a fiber, a new fiber
// continuing with the next thread whenever one waits at a barrier or warp operation, and the
// waiting fibers resumed one by one when their barrier releases.
//
// Control passes straight from fiber to fiber: a thread that begins to wait hands control to
// the next runnable thread (or to a pooled fiber that starts the next thread), and only comes
// back to the scheduler's own stack when nothing is runnable: to release a barrier, to create a
// fiber, at the end of a block, or for a fault. Whoever receives control files the continuation
// of whoever handed it over, as the hand-off note says (see Handoff).
//
// This header is part of what kernels include because the path a thread takes through a
// barrier is inlined into the kernel (wait_at_block_barrier below): after a switch of stacks
// the processor mispredicts every `ret` (its return-address stack describes the other stack),
// and with the switch in the kernel's own frame there is no `ret` between one barrier and the
// next. The rest (releases, faults, fibers) is in src/kernel/block_scheduler.cpp.
//
// Fibers are kept after use and reused by later blocks and grids, each with its stack: a kernel
// without barriers runs a whole grid in one visit to one fiber, a kernel with barriers needs one
// fiber per thread of a block, created once. Every exception that leaves a grid (a fault of the
// block's own making, or a C++ exception thrown by kernel code) is raised on the scheduler's
// stack, never across a fiber boundary.
#pragma once

// Boost.Context's inline code is compiled into the simulator's libraries and into every program
// built against them (this header reaches student files through device_sync.h); the linker keeps
// one copy of each inline function. Its assertions must therefore be the same everywhere, or the
// copy that throws a fiber's unwinding exception and the copy that checks it was caught disagree,
// and a program that used __syncthreads aborts at exit. The kit's build defines this for its own
// files too (meson.build); a program compiled with or without NDEBUG gets the same code.
#ifndef BOOST_DISABLE_ASSERTS
#define BOOST_DISABLE_ASSERTS
#endif
#include <boost/context/fiber.hpp>
#include <cstdint>
#include <cstring>
#include <exception>
#include <source_location>
#include <string>
#include <vector>

#include "mgpu/sim/block_execution.h"
#include "mgpu/sim/types.h"

namespace mgpu::sim::kernel {

enum class BarrierKind : unsigned char { Sync, Count, And, Or };

enum class WarpOp : unsigned char { Sync, ShuffleIndex, ShuffleUp, ShuffleDown, ShuffleXor, Ballot, Any, All };

enum class ThreadState : std::uint8_t { NotWaiting, AtBlockBarrier, AtWarpOp, Runnable };

// What a thread reports when it stops to wait.
struct WaitRequest {
    bool warp = false;                 // a warp operation, or a block barrier
    BarrierKind barrier = BarrierKind::Sync;
    WarpOp warp_op = WarpOp::Sync;
    unsigned mask = 0;                 // warp operations: the lanes that take part
    int lane_argument = 0;             // source lane, delta or lane mask of a shuffle
    int width = 32;                    // shuffle segment width
    std::uint64_t value = 0;           // predicate or shuffled value
    std::source_location where;        // the call in the kernel's source
};

// True when two places in the source are the same. Each call site has one std::source_location
// object (a std::source_location is its address), so comparing the objects usually settles it.
inline bool same_site(const std::source_location& a, const std::source_location& b) {
    if (std::memcmp(&a, &b, sizeof a) == 0) return true;
    return a.line() == b.line() && a.column() == b.column() && std::strcmp(a.file_name(), b.file_name()) == 0;
}

// True when two waits are the same call in the source.
inline bool same_call(const WaitRequest& a, const WaitRequest& b) {
    return a.warp == b.warp && same_site(a.where, b.where);
}

struct StackRange {
    char* low;
    char* high;
};

struct WaitingThread {
    boost::context::fiber fiber;       // its continuation while it waits or is runnable
    uint3 index{0, 0, 0};
    ThreadState state = ThreadState::NotWaiting;
    WaitRequest request;
    std::uint64_t result = 0;          // what its barrier computed for it
};

class BlockScheduler {
public:
    BlockScheduler() = default;
    BlockScheduler(const BlockScheduler&) = delete;
    BlockScheduler& operator=(const BlockScheduler&) = delete;
    ~BlockScheduler();

    void run_grid(const GridShape& shape, ThreadLoop loop, void* stored_arguments);

    // A wait in two halves, both called by the running simulated thread: begin_wait gives its
    // record, whose request the caller fills in, and finish_wait suspends it until its barrier
    // releases and returns what the barrier computed for it. Both are inlined into their callers:
    // after a switch of stacks every `ret` is mispredicted (the processor's return-address stack
    // describes the other stack), so the fewer frames between kernel and switch, the cheaper.
    [[gnu::always_inline]] WaitingThread& begin_wait() {
        const unsigned linear = linear_index(threadIdx);
        waiting_thread_ = linear;
        WaitingThread& self = threads_[linear];
        self.index = threadIdx;
        return self;
    }

    [[gnu::always_inline]] std::uint64_t finish_wait(WaitingThread& self) {
        const unsigned linear = waiting_thread_;
        ThreadCursor& cursor = thread_cursor;
        ++cursor.suspensions;
        cursor.note_started(linear, self.index);
        if (!self.request.warp) {
            self.state = ThreadState::AtBlockBarrier;
            if (block_waiters_.empty()) block_call_ = self.request.where;
            else if (!same_site(self.request.where, block_call_)) block_calls_differ_ = true;
            block_true_predicates_ += self.request.value != 0 ? 1u : 0u;
            block_waiters_.push_back(linear);
        } else {
            enqueue_at_warp_op(linear);
            if (runnable_head_ < runnable_.size() && runnable_[runnable_head_] == linear) {
                // Its own arrival completed its warp operation and it is first in line: go on.
                ++runnable_head_;
                self.state = ThreadState::NotWaiting;
                return self.result;
            }
        }
        handoff_ = Handoff{Handoff::Waiting, linear};
        boost::context::fiber next = next_to_run();
        prefetch_next_in_line();
        file(std::move(next).resume());
        return self.result;
    }

    // Throws away a grid that was left without returning from run_grid.
    void abandon_grid();

    unsigned warp_lanes_alive(unsigned linear_thread) const;
    std::size_t pooled_fibers() const { return idle_.size(); }

private:
    // Left by a context for the one it hands control to: what the continuation it receives is.
    struct Handoff {
        enum Kind { Scheduler, Waiting, Parked } kind = Scheduler;
        unsigned thread = 0;           // Waiting: the linear index of the thread that waits
    };

    [[gnu::always_inline]] void file(boost::context::fiber&& incoming) {
        if (handoff_.kind == Handoff::Waiting) [[likely]]
            threads_[handoff_.thread].fiber = std::move(incoming);
        else if (handoff_.kind == Handoff::Scheduler)
            to_scheduler_ = std::move(incoming);
        else
            idle_.push_back(std::move(incoming));
    }

    // Where control goes from a thread that waits or a loop that ended: the next runnable
    // thread, else a pooled fiber for the next thread not yet started, else the scheduler.
    [[gnu::always_inline]] boost::context::fiber next_to_run() {
        if (runnable_head_ < runnable_.size()) return take_runnable();
        if (thread_cursor.started < thread_cursor.count && !idle_.empty()) return take_idle();
        return std::move(to_scheduler_);
    }

    // Loads the top of the stack of the thread that will run after the next one, so that it is
    // in the cache by the time that thread resumes: a barrier visits every waiting thread's stack
    // in turn, and those stacks together are larger than the first-level cache.
    [[gnu::always_inline]] void prefetch_next_in_line() const {
        const boost::context::fiber* fiber = nullptr;
        if (runnable_head_ < runnable_.size()) fiber = &threads_[runnable_[runnable_head_]].fiber;
        else if (!idle_.empty()) fiber = &idle_.back();
        else return;
        static_assert(sizeof(boost::context::fiber) == sizeof(void*), "a fiber is its saved stack pointer");
        const char* stack = nullptr;
        std::memcpy(&stack, fiber, sizeof stack);
        if (stack == nullptr) return;
        for (int line = 0; line < 5; ++line) __builtin_prefetch(stack + 64 * line);
    }

    [[gnu::always_inline]] boost::context::fiber take_runnable() {
        WaitingThread& thread = threads_[runnable_[runnable_head_++]];
        threadIdx = thread.index;
        thread.state = ThreadState::NotWaiting;
        return std::move(thread.fiber);
    }

    [[gnu::always_inline]] boost::context::fiber take_idle() {
        boost::context::fiber fiber = std::move(idle_.back());
        idle_.pop_back();
        return fiber;
    }

    unsigned linear_index(const uint3& index) const {
        return index.x + shape_->block.x * (index.y + shape_->block.y * index.z);
    }

    boost::context::fiber make_fiber();
    bool on_fiber_stack() const;
    boost::context::fiber fiber_body(boost::context::fiber&& incoming);
    void enqueue_at_warp_op(unsigned linear);
    void run_block();
    void release_block_barrier();
    void try_release_warp(unsigned warp);
    void compute_warp_results(unsigned warp, std::uint32_t waiting);
    std::uint32_t existing_lanes(unsigned warp) const;

    [[noreturn]] void fail(cudaError_t code, const std::string& message);
    [[noreturn]] void fail_with_thrown_exception();
    [[noreturn]] void fail_stuck_warp();
    void discard_waiting_threads();

    const GridShape* shape_ = nullptr;
    ThreadLoop loop_ = nullptr;
    void* arguments_ = nullptr;
    bool grid_running_ = false;

    boost::context::fiber to_scheduler_;   // the scheduler's continuation while a fiber runs
    Handoff handoff_;
    unsigned waiting_thread_ = 0;          // linear index of the thread between begin_ and finish_wait
    std::exception_ptr thrown_;            // a C++ exception that left the kernel

    // Declared before the fibers, so that it outlives them: a fiber's stack leaves it when freed.
    std::vector<StackRange> stacks_;              // every fiber stack, to tell kernel code from the scheduler
    std::vector<boost::context::fiber> idle_;
    unsigned fibers_made_ = 0;
    std::vector<WaitingThread> threads_;          // by linear thread index within the block
    std::vector<unsigned> block_waiters_;         // at a block barrier, in arrival order
    std::source_location block_call_;             // where the first of them waits
    bool block_calls_differ_ = false;             // not all of them wait at the first one's call
    unsigned block_true_predicates_ = 0;          // how many of them passed a non-zero predicate
    std::vector<std::uint32_t> warp_waiting_;     // lanes at a warp operation, per warp
    std::vector<unsigned> runnable_;              // released, to resume in this order
    std::size_t runnable_head_ = 0;
    unsigned at_warp_op_ = 0;
};

// The scheduler of the grid that is running now (one at a time: see block_execution.h).
extern BlockScheduler* active_scheduler;

// Reports a barrier or warp operation called from host code, and ends the process.
[[noreturn]] void called_outside_kernel(const char* call, const std::source_location& where);

// Waits at a block barrier; returns the reduction the kind asks for (the count of threads with
// a non-zero predicate, their logical and / or), or 0 for Sync.
[[gnu::always_inline]] inline int wait_at_block_barrier(BarrierKind kind, int predicate, std::source_location where) {
    BlockScheduler* const scheduler = active_scheduler;
    if (scheduler == nullptr) [[unlikely]]
        called_outside_kernel("__syncthreads()", where);
    WaitingThread& self = scheduler->begin_wait();
    WaitRequest& request = self.request;
    request.warp = false;
    request.barrier = kind;
    request.value = predicate != 0 ? 1 : 0;
    request.where = where;
    return static_cast<int>(scheduler->finish_wait(self));
}

// Waits until the lanes of `mask` meet, then returns this lane's result: the value of the
// source lane for a shuffle, the ballot mask, or the any/all flag.
[[gnu::always_inline]] inline std::uint64_t wait_at_warp_op(WarpOp op, unsigned mask, std::uint64_t value,
                                                            int lane_argument, int width, std::source_location where) {
    BlockScheduler* const scheduler = active_scheduler;
    if (scheduler == nullptr) [[unlikely]]
        called_outside_kernel("a warp operation (__syncwarp, __shfl_*_sync, ...)", where);
    WaitingThread& self = scheduler->begin_wait();
    WaitRequest& request = self.request;
    request.warp = true;
    request.warp_op = op;
    request.mask = mask;
    request.value = value;
    request.lane_argument = lane_argument;
    request.width = width;
    request.where = where;
    return scheduler->finish_wait(self);
}

}  // namespace mgpu::sim::kernel
