// Runs the blocks of a grid: the threads of a block as plain calls inside a fiber, a new fiber
// continuing with the next thread whenever one waits at a barrier or warp operation, and the
// waiting fibers resumed one by one when their barrier releases.
//
// Fibers are kept after use and reused by later blocks and grids, each with its stack: a kernel
// without barriers costs one switch into a fiber per block, a kernel with barriers one fiber
// per thread of a block, created once. Every exception that leaves a block (a fault of the
// block's own making, or a C++ exception thrown by kernel code) is raised here, on the
// scheduler's stack, never across a fiber boundary.
#pragma once

#include <boost/context/fiber.hpp>
#include <cstdint>
#include <exception>
#include <source_location>
#include <string>
#include <vector>

#include "mgpu/sim/block_execution.h"
#include "mgpu/sim/device_sync.h"

namespace mgpu::sim::kernel {

enum class ThreadState : std::uint8_t { NotWaiting, AtBlockBarrier, AtWarpOp, Runnable };

// What a thread reports when it stops to wait, and what it gets back when it resumes.
struct WaitRequest {
    bool warp = false;                 // a warp operation, or a block barrier
    BarrierKind barrier = BarrierKind::Sync;
    WarpOp warp_op = WarpOp::Sync;
    unsigned mask = 0;                 // warp operations: the lanes that take part
    int lane_argument = 0;             // source lane, delta or lane mask of a shuffle
    int width = 32;                    // shuffle segment width
    std::uint64_t value = 0;           // predicate or shuffled value
    const char* file = "";
    unsigned line = 0;
    unsigned column = 0;
};

struct WaitingThread {
    boost::context::fiber fiber;
    uint3 index{0, 0, 0};
    ThreadState state = ThreadState::NotWaiting;
    WaitRequest request;
    std::uint64_t result = 0;
};

class BlockScheduler {
public:
    BlockScheduler() = default;
    BlockScheduler(const BlockScheduler&) = delete;
    BlockScheduler& operator=(const BlockScheduler&) = delete;
    ~BlockScheduler();

    void run_grid(const GridShape& shape, ThreadLoop loop, void* stored_arguments);

    // Called by the running simulated thread: suspends it until its barrier releases, and
    // returns what the barrier computed for it. Inlined into its callers: after a switch between
    // stacks every `ret` is mispredicted (the processor's return-address stack belongs to the
    // other stack), so the fewer frames between the kernel and the switch, the cheaper a barrier.
    [[gnu::always_inline]] std::uint64_t wait(const WaitRequest& request) {
        const unsigned linear = linear_index(threadIdx);
        WaitingThread& self = threads_[linear];
        self.request = request;
        self.index = threadIdx;
        waiting_thread_ = linear;
        ++thread_cursor.suspensions;
        event_ = Event::Waiting;
        to_scheduler_ = std::move(to_scheduler_).resume();
        return self.result;
    }

    // Throws away a grid that was left without returning from run_grid.
    void abandon_grid();

    unsigned warp_lanes_alive(unsigned linear_thread) const;
    std::size_t pooled_fibers() const { return idle_.size(); }
    bool grid_running() const { return grid_running_; }

private:
    enum class Event { Parked, Waiting, Threw };

    boost::context::fiber make_fiber();
    boost::context::fiber fiber_body(boost::context::fiber&& scheduler_side);
    void switch_to(boost::context::fiber&& fiber);
    void record_waiting(boost::context::fiber&& fiber);
    void record_parked(boost::context::fiber&& fiber);
    void run_block();
    void start_threads_in_fiber();
    void resume_thread(unsigned linear);
    void release_block_barrier();
    void try_release_warp(unsigned warp);
    void compute_warp_results(unsigned warp, std::uint32_t waiting);
    unsigned linear_index(const uint3& index) const {
        return index.x + shape_->block.x * (index.y + shape_->block.y * index.z);
    }
    std::uint32_t existing_lanes(unsigned warp) const;

    [[noreturn]] void fail(cudaError_t code, const std::string& message);
    [[noreturn]] void fail_with_thrown_exception();
    [[noreturn]] void fail_stuck_warp();
    void discard_waiting_threads();

    const GridShape* shape_ = nullptr;
    ThreadLoop loop_ = nullptr;
    void* arguments_ = nullptr;
    bool grid_running_ = false;

    // Handed between the scheduler and the fiber it runs.
    boost::context::fiber to_scheduler_;
    Event event_ = Event::Parked;
    unsigned waiting_thread_ = 0;      // linear index of the thread that just began to wait
    std::exception_ptr thrown_;

    std::vector<boost::context::fiber> idle_;
    std::vector<WaitingThread> threads_;          // by linear thread index within the block
    std::vector<unsigned> block_waiters_;         // at a block barrier, in arrival order
    std::vector<std::uint32_t> warp_waiting_;     // lanes at a warp operation, per warp
    std::vector<unsigned> runnable_;              // released, to resume in this order
    std::size_t runnable_head_ = 0;
    unsigned at_warp_op_ = 0;
};

// The scheduler of the grid that is running now (one at a time: see block_execution.h).
extern BlockScheduler* active_scheduler;

}  // namespace mgpu::sim::kernel
