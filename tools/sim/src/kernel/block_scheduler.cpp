#include "mgpu/sim/block_scheduler.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <boost/context/stack_context.hpp>
#include <boost/context/stack_traits.hpp>
#include <cstring>
#include <new>
#include <optional>
#include <memory>
#include <utility>

#include "kernel/fault_text.h"
#include "mgpu/sim/kernel_submit.h"

namespace mgpu::sim::kernel {

namespace ctx = boost::context;

BlockScheduler* active_scheduler = nullptr;

namespace {

// Kernel code runs on these stacks: room for deep device-function calls and printf, with a
// guard page below so that an overflow faults instead of overwriting a neighbouring stack.
constexpr std::size_t kFiberStackBytes = 256 * 1024;

// Fiber stacks, each mapped with a guard page below it. A barrier touches the top few hundred
// bytes of every waiting thread's stack; shifting each stack's top by a different amount keeps
// those bytes of different fibers in different cache sets instead of all in the same few.
// The stacks are listed in `stacks` while they exist.
class ColoredStack {
public:
    ColoredStack(std::size_t bytes, unsigned color, std::vector<StackRange>* stacks)
        : bytes_(bytes), offset_((color % 64) * 320), stacks_(stacks) {}

    ctx::stack_context allocate() {
        const std::size_t page = ctx::stack_traits::page_size();
        const std::size_t total = (bytes_ + offset_ + page - 1) / page * page + page;
        void* base = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (base == MAP_FAILED) throw std::bad_alloc();
        ::mprotect(base, page, PROT_NONE);
        ctx::stack_context context;
        context.size = total - offset_;
        context.sp = static_cast<char*>(base) + context.size;
        stacks_->push_back({static_cast<char*>(base), static_cast<char*>(base) + total});
        return context;
    }

    void deallocate(ctx::stack_context& context) noexcept {
        char* const base = static_cast<char*>(context.sp) - context.size;
        std::erase_if(*stacks_, [base](const StackRange& range) { return range.low == base; });
        ::munmap(base, context.size + offset_);
    }

private:
    std::size_t bytes_;
    std::size_t offset_;
    std::vector<StackRange>* stacks_;
};

// A shuffle's width must be a power of two up to 32; anything else reads as 32 (CUDA leaves it undefined).
unsigned shuffle_width(int width) {
    return (width >= 1 && width <= 32 && std::has_single_bit(static_cast<unsigned>(width))) ? static_cast<unsigned>(width)
                                                                                             : 32u;
}

// The lane a shuffle reads for `lane`, or -1 when it keeps its own value.
int shuffle_source(WarpOp op, unsigned lane, int argument, unsigned width) {
    const unsigned segment = lane & ~(width - 1);
    long source = 0;
    switch (op) {
        case WarpOp::ShuffleIndex: source = segment + (static_cast<unsigned>(argument) & (width - 1)); break;
        case WarpOp::ShuffleUp:
            source = static_cast<long>(lane) - argument;
            if (source < static_cast<long>(segment)) return -1;
            break;
        case WarpOp::ShuffleDown:
            source = static_cast<long>(lane) + argument;
            if (source >= static_cast<long>(segment + width)) return -1;
            break;
        case WarpOp::ShuffleXor:
            source = static_cast<long>(lane ^ static_cast<unsigned>(argument));
            if (source >= static_cast<long>(segment + width)) return -1;
            break;
        default: return -1;
    }
    return (source >= 0 && source < 32) ? static_cast<int>(source) : -1;
}

// Two lanes of one mask waiting at different kinds of warp operation (a lane at __syncwarp cannot
// hand a value to one at __shfl_sync): the first such pair, or nothing.
std::optional<std::pair<unsigned, unsigned>> mixed_operations(const std::vector<WaitingThread>& threads, unsigned base,
                                                              std::uint32_t waiting) {
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!(waiting & (1u << lane))) continue;
        const WaitRequest& request = threads[base + lane].request;
        const std::uint32_t members = (request.mask | (1u << lane)) & waiting;
        for (unsigned other = 0; other < 32; ++other)
            if ((members & (1u << other)) && threads[base + other].request.warp_op != request.warp_op)
                return std::pair{base + lane, base + other};
    }
    return std::nullopt;
}

std::vector<unsigned> lanes_of(std::uint32_t lanes, unsigned base) {
    std::vector<unsigned> list;
    for (unsigned lane = 0; lane < 32; ++lane)
        if (lanes & (1u << lane)) list.push_back(base + lane);
    return list;
}

}  // namespace

BlockScheduler::~BlockScheduler() {
    if (grid_running_) {
        // Destroyed in the middle of a grid (the process is exiting from inside a kernel): the
        // suspended fibers hold frames of a grid that will never continue. Leave them alone.
        new std::vector<WaitingThread>(std::move(threads_));
        new ctx::fiber(std::move(to_scheduler_));
        new std::vector<ctx::fiber>(std::move(idle_));
        return;
    }
    idle_.clear();   // unwinds each parked fiber, which gives its stack back
}

ctx::fiber BlockScheduler::make_fiber() {
    return ctx::fiber(std::allocator_arg, ColoredStack(kFiberStackBytes, fibers_made_++, &stacks_),
                      [this](ctx::fiber&& incoming) { return fiber_body(std::move(incoming)); });
}

// A fiber runs the thread loop, parks when the loop has no thread left to start, and runs the
// loop again when it is taken from the pool. Exceptions stop here: a C++ exception from kernel
// code sends the fiber to the scheduler with the exception; only the forced unwinding that
// destroys a suspended fiber passes through.
ctx::fiber BlockScheduler::fiber_body(ctx::fiber&& incoming) {
    file(std::move(incoming));
    for (;;) {
        try {
            loop_(arguments_);
        } catch (const ctx::detail::forced_unwind&) {
            throw;
        } catch (...) {
            thrown_ = std::current_exception();
        }
        thread_cursor.started = thread_cursor.count;   // a loop ends only when no thread is left to start
        handoff_ = Handoff{Handoff::Parked, 0};
        ctx::fiber next = thrown_ ? std::move(to_scheduler_) : next_to_run();
        file(std::move(next).resume());
    }
}

void BlockScheduler::enqueue_at_warp_op(unsigned linear) {
    threads_[linear].state = ThreadState::AtWarpOp;
    ++at_warp_op_;
    warp_waiting_[linear / 32] |= 1u << (linear % 32);
    try_release_warp(linear / 32);
}

std::uint32_t BlockScheduler::existing_lanes(unsigned warp) const {
    const unsigned lanes = thread_cursor.count - warp * 32;
    return lanes >= 32 ? 0xffffffffu : ((1u << lanes) - 1u);
}

// Control comes back here only when no thread is runnable and either a fiber is needed that the
// pool lacks, or every thread has started: then a barrier releases, the block is done, or the
// block can never finish (a fault).
void BlockScheduler::run_block() {
    const ThreadCursor& cursor = thread_cursor;
    runnable_.clear();
    runnable_head_ = 0;
    for (;;) {
        ctx::fiber next;
        if (runnable_head_ < runnable_.size()) {
            next = take_runnable();
        } else {
            runnable_.clear();
            runnable_head_ = 0;
            if (cursor.started < cursor.count) {
                next = idle_.empty() ? make_fiber() : take_idle();
            } else {
                if (at_warp_op_ > 0) {
                    // Lanes that returned since these lanes began waiting no longer hold them back.
                    for (unsigned warp = 0; warp < warp_waiting_.size(); ++warp)
                        if (warp_waiting_[warp] != 0) try_release_warp(warp);
                    if (!runnable_.empty()) continue;
                    fail_stuck_warp();
                }
                if (block_waiters_.empty()) return;
                release_block_barrier();
                continue;
            }
        }
        handoff_ = Handoff{Handoff::Scheduler, 0};
        file(std::move(next).resume());
        if (thrown_) fail_with_thrown_exception();
    }
}

void BlockScheduler::release_block_barrier() {
    const unsigned count = thread_cursor.count;
    if (block_waiters_.size() < count) {
        // Every thread has started and none runs: the ones not waiting have returned.
        std::vector<unsigned> returned;
        std::vector<unsigned> waiting;
        for (unsigned t = 0; t < count; ++t)
            (threads_[t].state == ThreadState::AtBlockBarrier ? waiting : returned).push_back(t);
        const WaitRequest& call = threads_[waiting.front()].request;
        fail(cudaErrorLaunchFailure,
             where_in_grid(*shape_, blockIdx) + ": " + describe_threads(returned, shape_->block) +
                 " returned while " + describe_threads(waiting, shape_->block) + " wait at " + describe_call(call) +
                 ", so the barrier can never complete. Every thread of a block must reach each __syncthreads(): "
                 "instead of returning early (as in `if (i >= n) return;`), put only the work under the condition "
                 "(`if (i < n) { ... }`) and keep the __syncthreads() outside it.");
    }

    const WaitRequest& first = threads_[block_waiters_.front()].request;
    if (block_calls_differ_) {
        std::vector<std::pair<const WaitRequest*, std::vector<unsigned>>> calls;
        for (unsigned t = 0; t < count; ++t) {
            const WaitRequest& request = threads_[t].request;
            auto group = calls.begin();
            while (group != calls.end() && !same_call(*group->first, request)) ++group;
            if (group == calls.end()) {
                calls.push_back({&request, {}});
                group = calls.end() - 1;
            }
            group->second.push_back(t);
        }
        std::string list;
        for (const auto& [request, threads] : calls)
            list += (list.empty() ? "" : "; ") + describe_threads(threads, shape_->block) + " at " + describe_call(*request);
        fail(cudaErrorLaunchFailure,
             where_in_grid(*shape_, blockIdx) + ": the threads of the block wait at different barriers (" + list +
                 "), so none of them can complete. Every thread of a block must reach the same __syncthreads(): "
                 "move it out of the if/else or loop whose condition differs between threads.");
    }

    const unsigned true_count = block_true_predicates_;
    std::uint64_t result = 0;
    switch (first.barrier) {
        case BarrierKind::Sync: result = 0; break;
        case BarrierKind::Count: result = true_count; break;
        case BarrierKind::And: result = true_count == count ? 1 : 0; break;
        case BarrierKind::Or: result = true_count > 0 ? 1 : 0; break;
    }
    block_true_predicates_ = 0;
    for (unsigned t : block_waiters_) {
        threads_[t].result = result;
        threads_[t].state = ThreadState::Runnable;
    }
    runnable_.swap(block_waiters_);
    runnable_head_ = 0;
}

// Asked by a running thread: every thread before it has started (threads start in order), and
// those of them that are not waiting have returned.
unsigned BlockScheduler::warp_lanes_alive(unsigned linear_thread) const {
    const unsigned warp = linear_thread / 32;
    const unsigned started = std::max(thread_cursor.started, linear_thread + 1);
    std::uint32_t alive = existing_lanes(warp);
    for (unsigned lane = 0; lane < 32; ++lane) {
        const unsigned t = warp * 32 + lane;
        if ((alive & (1u << lane)) && t != linear_thread && t < started &&
            threads_[t].state == ThreadState::NotWaiting)
            alive &= ~(1u << lane);
    }
    return alive;
}

void BlockScheduler::try_release_warp(unsigned warp) {
    const unsigned base = warp * 32;
    const std::uint32_t waiting = warp_waiting_[warp];
    std::uint32_t needed = 0;
    for (unsigned lane = 0; lane < 32; ++lane)
        if (waiting & (1u << lane)) needed |= threads_[base + lane].request.mask;
    needed &= existing_lanes(warp);
    // A lane that has returned never arrives; CUDA lets the others go on without it.
    for (unsigned lane = 0; lane < 32; ++lane) {
        const unsigned t = base + lane;
        if ((needed & ~waiting & (1u << lane)) && t < thread_cursor.started &&
            threads_[t].state == ThreadState::NotWaiting)
            needed &= ~(1u << lane);
    }
    if ((needed & ~waiting) != 0) return;

    // Lanes that meet must be at the same kind of operation; if not, they wait on, and the block
    // ends with fail_stuck_warp's diagnosis once nothing else can run.
    if (mixed_operations(threads_, base, waiting)) return;

    compute_warp_results(warp, waiting);
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (waiting & (1u << lane)) {
            threads_[base + lane].state = ThreadState::Runnable;
            runnable_.push_back(base + lane);
        }
    }
    warp_waiting_[warp] = 0;
    at_warp_op_ -= static_cast<unsigned>(std::popcount(waiting));
}

void BlockScheduler::compute_warp_results(unsigned warp, std::uint32_t waiting) {
    const unsigned base = warp * 32;
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!(waiting & (1u << lane))) continue;
        WaitingThread& thread = threads_[base + lane];
        const WaitRequest& request = thread.request;
        const std::uint32_t members = (request.mask | (1u << lane)) & waiting;
        std::uint32_t ballot = 0;
        for (unsigned other = 0; other < 32; ++other)
            if ((members & (1u << other)) && threads_[base + other].request.value != 0) ballot |= 1u << other;
        switch (request.warp_op) {
            case WarpOp::Sync: thread.result = 0; break;
            case WarpOp::Ballot: thread.result = ballot; break;
            case WarpOp::Any: thread.result = ballot != 0 ? 1 : 0; break;
            case WarpOp::All: thread.result = ballot == members ? 1 : 0; break;
            default: {
                const int source = shuffle_source(request.warp_op, lane, request.lane_argument, shuffle_width(request.width));
                const bool readable = source >= 0 && (waiting & (1u << source));
                thread.result = readable ? threads_[base + static_cast<unsigned>(source)].request.value : request.value;
            }
        }
    }
}

void BlockScheduler::fail_stuck_warp() {
    for (unsigned warp = 0; warp < warp_waiting_.size(); ++warp) {
        const std::uint32_t waiting = warp_waiting_[warp];
        if (waiting == 0) continue;
        if (const auto pair = mixed_operations(threads_, warp * 32, waiting)) {
            const WaitRequest& mine = threads_[pair->first].request;
            const WaitRequest& theirs = threads_[pair->second].request;
            std::vector<unsigned> at_mine, at_theirs;
            for (unsigned lane = 0; lane < 32; ++lane) {
                if (!(waiting & (1u << lane))) continue;
                const WaitRequest& request = threads_[warp * 32 + lane].request;
                if (same_site(request.where, mine.where) && request.warp_op == mine.warp_op)
                    at_mine.push_back(warp * 32 + lane);
                if (same_site(request.where, theirs.where) && request.warp_op == theirs.warp_op)
                    at_theirs.push_back(warp * 32 + lane);
            }
            fail(cudaErrorLaunchFailure,
                 where_in_grid(*shape_, blockIdx) + ", warp " + std::to_string(warp) + ": " +
                     describe_threads(at_mine, shape_->block) + " wait at " + describe_call(mine) + " while " +
                     describe_threads(at_theirs, shape_->block) + ", named in the same mask, wait at " +
                     describe_call(theirs) +
                     ". The lanes a warp operation's mask names must all reach that kind of operation: call it on "
                     "every path those lanes take, or name only the lanes that call it in the mask.");
        }
        const WaitingThread& first = threads_[warp * 32 + static_cast<unsigned>(std::countr_zero(waiting))];
        std::vector<unsigned> at_barrier;
        for (unsigned t : block_waiters_)
            if (t / 32 == warp) at_barrier.push_back(t);
        std::string holders = "the other lanes of the warp";
        if (!at_barrier.empty())
            holders = describe_threads(at_barrier, shape_->block) + ", which wait at " +
                      describe_call(threads_[at_barrier.front()].request);
        fail(cudaErrorLaunchFailure,
             where_in_grid(*shape_, blockIdx) + ", warp " + std::to_string(warp) + ": " +
                 describe_threads(lanes_of(waiting, warp * 32), shape_->block) + " wait at " +
                 describe_call(first.request) + " for " + holders +
                 ". A warp operation completes only when every lane named in its mask makes it; pass a mask "
                 "naming just the lanes that take part, or let every lane of the mask reach the call.");
    }
    fail(cudaErrorLaunchFailure, where_in_grid(*shape_, blockIdx) + ": threads wait at a warp operation that cannot complete.");
}

void BlockScheduler::fail_with_thrown_exception() {
    std::exception_ptr thrown = std::exchange(thrown_, nullptr);
    std::string what;
    cudaError_t code = cudaErrorLaunchFailure;
    try {
        std::rethrow_exception(thrown);
    } catch (const KernelFault& fault) {
        code = fault.code;
        what = fault.message;
    } catch (const std::exception& exception) {
        what = std::string("the kernel threw a C++ exception (") + exception.what() +
               "). Device code cannot throw: report the problem through a result buffer instead";
    } catch (...) {
        what = "the kernel threw a C++ exception. Device code cannot throw: report the problem through a result buffer instead";
    }
    fail(code, where_in_grid(*shape_, blockIdx) + ", thread (" + std::to_string(threadIdx.x) + "," +
                   std::to_string(threadIdx.y) + "," + std::to_string(threadIdx.z) + "): " + what + ".");
}

void BlockScheduler::discard_waiting_threads() {
    handoff_ = Handoff{};
    for (WaitingThread& thread : threads_) {
        thread.fiber = ctx::fiber{};   // unwinds the suspended thread and gives its stack back
        thread.state = ThreadState::NotWaiting;
    }
    block_waiters_.clear();
    block_calls_differ_ = false;
    block_true_predicates_ = 0;
    runnable_.clear();
    runnable_head_ = 0;
    for (std::uint32_t& lanes : warp_waiting_) lanes = 0;
    at_warp_op_ = 0;
}

void BlockScheduler::fail(cudaError_t code, const std::string& message) {
    discard_waiting_threads();
    throw KernelFault{code, message};
}

void BlockScheduler::abandon_grid() {
    if (to_scheduler_) {
        // It continues a scheduler frame that no longer exists: destroying it would jump there.
        new ctx::fiber(std::move(to_scheduler_));
    }
    discard_waiting_threads();
    grid_running_ = false;
    if (active_scheduler == this) active_scheduler = nullptr;
}

bool BlockScheduler::on_fiber_stack() const {
    const char* const here = static_cast<const char*>(__builtin_frame_address(0));
    return std::any_of(stacks_.begin(), stacks_.end(),
                       [here](const StackRange& range) { return here >= range.low && here < range.high; });
}

void BlockScheduler::run_grid(const GridShape& shape, ThreadLoop loop, void* stored_arguments) {
    if (grid_running_) {
        // From kernel code (a kernel that waits for device work) this would tear down the
        // running grid; from the scheduler's own stack the previous grid was left by a longjmp.
        if (on_fiber_stack())
            throw KernelFault{cudaErrorLaunchFailure,
                              "kernel '" + std::string(shape.kernel_name) + "' would have to run while kernel '" +
                                  std::string(shape_->kernel_name) +
                                  "' is running, because device code waited for device work (a CUDA call that "
                                  "synchronizes, made inside a kernel). Kernels cannot wait for other work: "
                                  "synchronize from host code, after the launch."};
        abandon_grid();
    }
    if (shape.dynamic_shared > kDynamicSharedCapacity)
        throw KernelFault{cudaErrorInvalidValue,
                          "kernel '" + std::string(shape.kernel_name) + "' asks for " +
                              std::to_string(shape.dynamic_shared) + " bytes of dynamic shared memory; the simulator has " +
                              std::to_string(kDynamicSharedCapacity) + " per block"};
    const std::uint64_t count = std::uint64_t{shape.block.x} * shape.block.y * shape.block.z;
    if (count == 0 || shape.grid.x == 0 || shape.grid.y == 0 || shape.grid.z == 0) return;

    shape_ = &shape;
    loop_ = loop;
    arguments_ = stored_arguments;
    threads_.resize(count);
    warp_waiting_.assign((count + 31) / 32, 0);
    std::memset(dynamic_shared_memory, 0xFF, shape.dynamic_shared);
    gridDim = shape.grid;
    blockDim = shape.block;
    ThreadCursor& cursor = thread_cursor;
    cursor.count = static_cast<unsigned>(count);
    cursor.dim_x = shape.block.x;
    cursor.dim_y = shape.block.y;

    BlockScheduler* const previous = active_scheduler;
    active_scheduler = this;
    grid_running_ = true;
    try {
        // The thread loop may finish several blocks in one visit (see ThreadCursor); the block
        // that is running when run_block returns is the last one it finished.
        cursor.blocks = std::uint64_t{shape.grid.x} * shape.grid.y * shape.grid.z;
        cursor.block = 0;
        blockIdx = uint3{0, 0, 0};
        while (cursor.block < cursor.blocks) {
            cursor.started = 0;
            cursor.next = uint3{0, 0, 0};
            cursor.suspensions_before_block = cursor.suspensions;
            run_block();
            if (++cursor.block < cursor.blocks) {
                const std::uint64_t b = cursor.block;
                blockIdx = uint3{static_cast<unsigned>(b % shape.grid.x),
                                 static_cast<unsigned>(b / shape.grid.x % shape.grid.y),
                                 static_cast<unsigned>(b / (std::uint64_t{shape.grid.x} * shape.grid.y))};
            }
        }
    } catch (...) {
        grid_running_ = false;
        active_scheduler = previous;
        throw;
    }
    grid_running_ = false;
    active_scheduler = previous;
}

}  // namespace mgpu::sim::kernel
