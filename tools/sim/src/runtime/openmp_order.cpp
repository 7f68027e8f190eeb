// OpenMP's synchronisation carries the modelled clock (host_order.h). libgomp waits on its own
// futexes, out of the C library's sight, so the entry points GCC's code calls are hooked here: a
// parallel region starts every thread of the team at the time its encountering thread stood at,
// and ends, at its implicit barrier, at the latest time of any of them; an explicit barrier (and
// the end of a worksharing construct without nowait) lets no thread leave before the latest
// arrival; a critical section and an omp_lock_t order as a mutex does. The real time a thread
// spends waiting for its team (spinning or asleep, whatever OMP_WAIT_POLICY says) is not its own.
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>

#include "host_order.h"
#include "program_clock.h"
#include "race_annotations.h"

namespace mgpu::sim::rt {
namespace {

using namespace host_order;

template <typename Function>
Function next(const char* name) {
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

#define MGPU_NEXT_OMP(name) static const auto real = next<decltype(&::name)>(#name)

// One execution of a parallel region.
struct Region {
    void (*body)(void*);
    void* data;
    double start_us;
    std::atomic<double> end_us;
};

thread_local Region* t_region = nullptr;

void raise_end(std::atomic<double>& end, double clock_us) {
    double seen = end.load();
    while (seen < clock_us && !end.compare_exchange_weak(seen, clock_us)) {
    }
}

// Each thread of the team runs the region's body through this.
void run_member(void* raw) {
    Region& region = *static_cast<Region*>(raw);
    Region* outer = t_region;
    t_region = &region;
    raise_to(region.start_us);
    race_acquire(&region.start_us);
    // A worker comes from the team's pool, where it waited since its last region, and the
    // encountering thread from starting the team: neither is the program's own time.
    program_clock_resume(clock_us());
    region.body(region.data);
    race_release(&region.end_us);
    raise_end(region.end_us, clock_us());
    // From here to the region's end the thread waits for the rest of its team.
    program_clock_wait_begin();
    t_region = outer;
}

// Runs a parallel region through `start` (the real entry point, called with run_member and the
// region), then takes the team's latest time on the encountering thread.
template <typename Start>
void parallel(void (*body)(void*), void* data, Start&& start) {
    bool active = false;
    {
        // Only asked: the encountering thread runs the program's code in the region too, where
        // the hooks must stay active.
        Hook hook;
        active = static_cast<bool>(hook);
    }
    if (!active) {
        start(body, data);
        return;
    }
    Region region{body, data, clock_us(), {clock_us()}};
    race_release(&region.start_us);
    program_clock_wait_begin();
    start(run_member, &region);
    race_acquire(&region.end_us);
    raise_to(region.end_us.load());
    program_clock_wait_end(clock_us());
    forget_barrier(&region);
}

// A barrier of the current team.
template <typename Wait>
auto team_barrier(Wait&& wait) {
    Hook hook;
    Region* region = t_region;
    if (!hook || region == nullptr) return wait();
    const long round = arrive(region);
    Blocked blocked(true);
    auto result = wait();
    leave(region, round);
    return result;
}

struct NoResult {};

}  // namespace
}  // namespace mgpu::sim::rt

using namespace mgpu::sim::rt;
using namespace mgpu::sim::rt::host_order;

extern "C" {

void GOMP_parallel(void (*body)(void*), void* data, unsigned threads, unsigned flags);
void GOMP_parallel_loop_static(void (*body)(void*), void* data, unsigned threads, long start, long end, long step,
                               long chunk, unsigned flags);
void GOMP_parallel_loop_dynamic(void (*body)(void*), void* data, unsigned threads, long start, long end, long step,
                                long chunk, unsigned flags);
void GOMP_parallel_loop_guided(void (*body)(void*), void* data, unsigned threads, long start, long end, long step,
                               long chunk, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_dynamic(void (*body)(void*), void* data, unsigned threads, long start, long end,
                                             long step, long chunk, unsigned flags);
void GOMP_parallel_loop_nonmonotonic_guided(void (*body)(void*), void* data, unsigned threads, long start, long end,
                                            long step, long chunk, unsigned flags);
void GOMP_parallel_loop_runtime(void (*body)(void*), void* data, unsigned threads, long start, long end, long step,
                                unsigned flags);
void GOMP_parallel_loop_nonmonotonic_runtime(void (*body)(void*), void* data, unsigned threads, long start, long end,
                                             long step, unsigned flags);
void GOMP_parallel_loop_maybe_nonmonotonic_runtime(void (*body)(void*), void* data, unsigned threads, long start,
                                                   long end, long step, unsigned flags);
void GOMP_parallel_sections(void (*body)(void*), void* data, unsigned threads, unsigned count, unsigned flags);
unsigned GOMP_parallel_reductions(void (*body)(void*), void* data, unsigned threads, unsigned flags);
void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
void GOMP_loop_end(void);
bool GOMP_loop_end_cancel(void);
void GOMP_sections_end(void);
bool GOMP_sections_end_cancel(void);
void GOMP_critical_start(void);
void GOMP_critical_end(void);
void GOMP_critical_name_start(void** name);
void GOMP_critical_name_end(void** name);
void omp_set_lock(void* lock);
void omp_unset_lock(void* lock);
int omp_test_lock(void* lock);

// ---- parallel regions -------------------------------------------------------------------------

void GOMP_parallel(void (*body)(void*), void* data, unsigned threads, unsigned flags) {
    MGPU_NEXT_OMP(GOMP_parallel);
    parallel(body, data, [&](void (*run)(void*), void* argument) { real(run, argument, threads, flags); });
}

#define MGPU_PARALLEL_LOOP_CHUNKED(name)                                                                      \
    void name(void (*body)(void*), void* data, unsigned threads, long start, long end, long step, long chunk, \
              unsigned flags) {                                                                               \
        MGPU_NEXT_OMP(name);                                                                                  \
        parallel(body, data, [&](void (*run)(void*), void* argument) {                                        \
            real(run, argument, threads, start, end, step, chunk, flags);                                     \
        });                                                                                                   \
    }

MGPU_PARALLEL_LOOP_CHUNKED(GOMP_parallel_loop_static)
MGPU_PARALLEL_LOOP_CHUNKED(GOMP_parallel_loop_dynamic)
MGPU_PARALLEL_LOOP_CHUNKED(GOMP_parallel_loop_guided)
MGPU_PARALLEL_LOOP_CHUNKED(GOMP_parallel_loop_nonmonotonic_dynamic)
MGPU_PARALLEL_LOOP_CHUNKED(GOMP_parallel_loop_nonmonotonic_guided)

#define MGPU_PARALLEL_LOOP_RUNTIME(name)                                                                           \
    void name(void (*body)(void*), void* data, unsigned threads, long start, long end, long step, unsigned flags) { \
        MGPU_NEXT_OMP(name);                                                                                       \
        parallel(body, data, [&](void (*run)(void*), void* argument) {                                             \
            real(run, argument, threads, start, end, step, flags);                                                 \
        });                                                                                                        \
    }

MGPU_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
MGPU_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
MGPU_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

void GOMP_parallel_sections(void (*body)(void*), void* data, unsigned threads, unsigned count, unsigned flags) {
    MGPU_NEXT_OMP(GOMP_parallel_sections);
    parallel(body, data, [&](void (*run)(void*), void* argument) { real(run, argument, threads, count, flags); });
}

unsigned GOMP_parallel_reductions(void (*body)(void*), void* data, unsigned threads, unsigned flags) {
    MGPU_NEXT_OMP(GOMP_parallel_reductions);
    unsigned result = 0;
    parallel(body, data, [&](void (*run)(void*), void* argument) { result = real(run, argument, threads, flags); });
    return result;
}

// ---- barriers ---------------------------------------------------------------------------------

void GOMP_barrier(void) {
    MGPU_NEXT_OMP(GOMP_barrier);
    team_barrier([&] {
        real();
        return NoResult{};
    });
}

bool GOMP_barrier_cancel(void) {
    MGPU_NEXT_OMP(GOMP_barrier_cancel);
    return team_barrier([&] { return real(); });
}

void GOMP_loop_end(void) {
    MGPU_NEXT_OMP(GOMP_loop_end);
    team_barrier([&] {
        real();
        return NoResult{};
    });
}

bool GOMP_loop_end_cancel(void) {
    MGPU_NEXT_OMP(GOMP_loop_end_cancel);
    return team_barrier([&] { return real(); });
}

void GOMP_sections_end(void) {
    MGPU_NEXT_OMP(GOMP_sections_end);
    team_barrier([&] {
        real();
        return NoResult{};
    });
}

bool GOMP_sections_end_cancel(void) {
    MGPU_NEXT_OMP(GOMP_sections_end_cancel);
    return team_barrier([&] { return real(); });
}

// ---- critical sections and locks: as a mutex --------------------------------------------------

namespace {
char g_unnamed_critical;   // the one lock of every unnamed critical section
}

void GOMP_critical_start(void) {
    MGPU_NEXT_OMP(GOMP_critical_start);
    Hook hook;
    {
        Blocked blocked(static_cast<bool>(hook));
        real();
    }
    if (hook) acquire(&g_unnamed_critical);
}

void GOMP_critical_end(void) {
    MGPU_NEXT_OMP(GOMP_critical_end);
    {
        Hook hook;
        if (hook) release(&g_unnamed_critical);
    }
    real();
}

void GOMP_critical_name_start(void** name) {
    MGPU_NEXT_OMP(GOMP_critical_name_start);
    Hook hook;
    {
        Blocked blocked(static_cast<bool>(hook));
        real(name);
    }
    if (hook) acquire(name);
}

void GOMP_critical_name_end(void** name) {
    MGPU_NEXT_OMP(GOMP_critical_name_end);
    {
        Hook hook;
        if (hook) release(name);
    }
    real(name);
}

void omp_set_lock(void* lock) {
    MGPU_NEXT_OMP(omp_set_lock);
    Hook hook;
    {
        Blocked blocked(static_cast<bool>(hook));
        real(lock);
    }
    if (hook) acquire(lock);
}

void omp_unset_lock(void* lock) {
    MGPU_NEXT_OMP(omp_unset_lock);
    {
        Hook hook;
        if (hook) release(lock);
    }
    real(lock);
}

int omp_test_lock(void* lock) {
    MGPU_NEXT_OMP(omp_test_lock);
    Hook hook;
    const int result = real(lock);
    if (hook && result != 0) acquire(lock);
    return result;
}

}  // extern "C"
