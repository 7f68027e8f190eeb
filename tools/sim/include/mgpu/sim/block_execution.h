// How a grid runs on the host: the state that compiled kernel code shares with the block
// scheduler (src/kernel/), and the entry point that runs every block of a grid.
//
// Blocks run one after another. Inside a block the threads run as plain calls in a loop
// (run_threads below, instantiated per kernel so the kernel body inlines into it) inside
// one fiber, until a thread waits at a barrier: that fiber is then suspended and another
// fiber continues the loop with the next thread that has not started. A kernel without
// barriers therefore runs a whole grid in one visit to one fiber, with no switch per thread or
// per block (see ThreadCursor::chain_next_block).
//
// All of this state is plain globals, not thread_local: the runtime never runs device work
// on two host threads at once, and a global costs one load where a thread_local costs more.
#pragma once

#include <cstddef>
#include <tuple>

#include "mgpu/sim/site.h"
#include "mgpu/sim/types.h"

// The built-in variables of CUDA C++, under their real names and types.
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;

namespace mgpu::sim::kernel {

// Where the running grid stands. The thread loop keeps its own position in registers and
// reads `started` only when it begins and after one of its threads has waited (`suspensions`
// changed): while a thread waits, other fibers start the threads after it. The scheduler keeps
// `started` up to date from what each wait and each finished loop tells it.
//
// A block in which no thread waited is finished when the loop reaches its end, so the loop goes
// straight on with the next block (`block`, blockIdx): a grid without barriers runs in a single
// visit to one fiber.
struct ThreadCursor {
    unsigned started = 0;                 // threads of the running block handed out so far
    uint3 next{0, 0, 0};                  // threadIdx of thread number `started`
    unsigned count = 0;                   // threads per block
    unsigned dim_x = 1;                   // blockDim.x and blockDim.y, to step an index
    unsigned dim_y = 1;
    unsigned long long suspensions = 0;   // how many times a thread has waited, ever
    unsigned long long suspensions_before_block = 0;   // `suspensions` when the running block began
    unsigned long long block = 0;         // linear index of the running block
    unsigned long long blocks = 0;        // blocks in the grid

    // The thread `linear` (at `index`) waits: it is the last one started so far, unless others
    // started after it earlier (it was resumed from a barrier).
    void note_started(unsigned linear, const uint3& index) {
        if (started > linear) return;
        started = linear + 1;
        next = index;
        if (++next.x == dim_x) {
            next.x = 0;
            if (++next.y == dim_y) {
                next.y = 0;
                ++next.z;
            }
        }
    }

    // Moves on to the next block when the running one ran without a wait; false at the grid's end.
    bool chain_next_block() {
        if (suspensions != suspensions_before_block || block + 1 >= blocks) return false;
        ++block;
        if (++blockIdx.x == gridDim.x) {
            blockIdx.x = 0;
            if (++blockIdx.y == gridDim.y) {
                blockIdx.y = 0;
                ++blockIdx.z;
            }
        }
        return true;
    }
};

extern ThreadCursor thread_cursor;

// Dynamic shared memory (`extern __shared__ T name[];`). Blocks run one after another, so one
// buffer at a fixed address serves every block of every grid; cu2cpp turns each such
// declaration into a pointer to it. Filled with 0xFF bytes at the start of each launch, so a
// kernel that reads shared memory it never wrote gets the same wrong value on every run.
inline constexpr std::size_t kDynamicSharedCapacity = std::size_t{1} << 20;
extern unsigned char dynamic_shared_memory[];

// Runs the threads of the running block that have not started yet, in order, until all have
// started; returns when they have (threads that waited at a barrier on the way are the
// scheduler's business). Called by the scheduler inside a fiber.
using ThreadLoop = void (*)(void* stored_arguments);

// The kernel's arguments are copied onto the fiber's stack once per visit, so that the compiler
// may keep them in registers across the kernel's own stores; threads go a row (same y and z) at a
// time, so that only threadIdx.x changes in the innermost loop.
template <class Body, class Stored>
void run_threads(void* stored_arguments) {
    const Stored arguments = *static_cast<const Stored*>(stored_arguments);
    ThreadCursor& cursor = thread_cursor;
    const unsigned count = cursor.count;
    const unsigned dim_x = cursor.dim_x;
    const unsigned dim_y = cursor.dim_y;
    unsigned linear = cursor.started;
    uint3 index = cursor.next;
    for (;;) {
        while (linear < count) {
            threadIdx.y = index.y;
            threadIdx.z = index.z;
            const unsigned long long suspensions = cursor.suspensions;
            bool waited = false;
            for (unsigned x = index.x; x < dim_x; ++x) {
                threadIdx.x = x;
                std::apply(Body{}, arguments);
                if (cursor.suspensions != suspensions) {
                    waited = true;
                    break;
                }
            }
            if (waited) {   // a thread of this row waited: later threads were started meanwhile
                linear = cursor.started;
                index = cursor.next;
                continue;
            }
            linear += dim_x - index.x;
            index.x = 0;
            if (++index.y == dim_y) {
                index.y = 0;
                ++index.z;
            }
        }
        if (!cursor.chain_next_block()) return;
        linear = 0;
        index = uint3{0, 0, 0};
    }
}

struct GridShape {
    const char* kernel_name = "";
    Site site;                      // where the launch was written
    dim3 grid{1, 1, 1};
    dim3 block{1, 1, 1};
    std::size_t dynamic_shared = 0;
};

// Runs every block of the grid on the calling host thread. Throws KernelFault (from
// kernel_submit.h) for a barrier that not every thread of a block reaches, for dynamic shared
// memory beyond kDynamicSharedCapacity, and for a C++ exception escaping the kernel.
void run_grid(const GridShape& shape, ThreadLoop loop, void* stored_arguments);

// For a caller that left run_grid without returning (a longjmp out of a memory-fault handler
// while a kernel ran): throws away the suspended threads of that grid so the next grid starts
// clean. run_grid also does this by itself when it finds a grid left behind.
void abandon_running_grid();

// Fibers kept for reuse on the calling host thread (for tests and the benchmark).
std::size_t pooled_fibers();

}  // namespace mgpu::sim::kernel
