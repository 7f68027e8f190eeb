#include "host_order.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "program_clock.h"
#include "race_annotations.h"

namespace mgpu::sim::rt {
namespace {

using host_order::Hook;

// Per thread: the modelled time it stands at for host order (its clock after its last call, or
// later where an acquire raised it), and whether a hooked pthread_create set its start.
struct ThreadOrder {
    double clock_us = 0;
    bool start_known = false;
    int inside = 0;   // inside one of the hooks below: their own calls order nothing
    unsigned machine = 0;   // the machine (g_machine) the clock belongs to
};
thread_local constinit ThreadOrder t_order;

// Bumped when the machine is brought up again: every clock, and what is left on objects, belongs
// to the machine before and starts over.
std::atomic<unsigned> g_machine{0};

ThreadOrder& order() {
    const unsigned machine = g_machine.load(std::memory_order_acquire);
    if (t_order.machine != machine) {
        t_order.machine = machine;
        order().clock_us = 0;
        order().start_known = false;
    }
    return t_order;
}

// The table is reached from hooks that run before main and from the futex calls behind static
// initialisation, so it is built on first use without a guarded static, and guarded by a spin
// lock that takes no lock of the C library.
class SpinLock {
public:
    void lock() {
        while (flag_.test_and_set(std::memory_order_acquire)) sched_yield();
    }
    void unlock() { flag_.clear(std::memory_order_release); }

private:
    std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

struct Table {
    SpinLock lock;
    std::unordered_map<const void*, double> released;        // object -> latest modelled release
    std::unordered_set<const void*> ignored;                  // the simulator's own locks
    // Barriers: (barrier, round) -> the latest arrival, and (barrier, thread) -> its rounds so far.
    std::map<std::pair<const void*, long>, double> arrivals;
    std::map<std::pair<const void*, pthread_t>, long> rounds;
};

std::atomic<Table*> g_table{nullptr};

Table& table() {
    Table* current = g_table.load(std::memory_order_acquire);
    if (current != nullptr) return *current;
    auto* fresh = new Table();   // never destroyed: threads may synchronise during exit
    if (g_table.compare_exchange_strong(current, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;
    return *current;
}

// A thread's end is a plain store: a later thread with the same handle starts its own record.
void release_as_end(const void* object) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    t.released[object] = order().clock_us;
}

void forget(const void* object) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    t.released.erase(object);
}

// The next definition of a hooked function: the C library's, or the OpenMP runtime's.
template <typename Function>
Function next(const char* name, const char* version = nullptr) {
    void* found = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : nullptr;
    if (found == nullptr) found = dlsym(RTLD_NEXT, name);
    return reinterpret_cast<Function>(found);
}

#define MGPU_NEXT(name, ...)                                                                       \
    static const auto real = next<decltype(&::name)>(#name __VA_OPT__(, ) __VA_ARGS__)

const void* key(pthread_t thread) { return reinterpret_cast<const void*>(thread); }

// pthread_create's start routine, with the creator's time.
struct Start {
    void* (*routine)(void*);
    void* argument;
    double creator_clock_us;
    ProgramClockBranch creator_clock;
};

void* start_thread(void* raw) {
    const Start start = *static_cast<Start*>(raw);
    delete static_cast<Start*>(raw);
    order().clock_us = start.creator_clock_us;
    order().start_known = true;
    program_clock_start_from(start.creator_clock);
    void* result = start.routine(start.argument);
    {
        Hook hook;
        if (hook) release_as_end(key(pthread_self()));
    }
    return result;
}

}  // namespace

namespace host_order {

// A hook that runs while the program's own code runs on a thread of the program orders; the
// simulator's calls (inside a runtime call, on its own threads) and the hooks' own calls do not.
Hook::Hook() : active_(t_order.inside == 0 && running_program_code()) { ++t_order.inside; }
Hook::~Hook() { --t_order.inside; }

Blocked::Blocked(bool active) : active_(active) {
    if (active_) program_clock_wait_begin();
}
Blocked::~Blocked() {
    if (active_) program_clock_wait_end(order().clock_us);
}

double clock_us() { return order().clock_us; }
void raise_to(double clock_us) { order().clock_us = std::max(order().clock_us, clock_us); }

void release(const void* object) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    if (t.ignored.contains(object)) return;
    double& at = t.released[object];
    at = std::max(at, order().clock_us);
    race_release(object);
}

void acquire(const void* object) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    auto it = t.released.find(object);
    if (it != t.released.end()) order().clock_us = std::max(order().clock_us, it->second);
    if (!t.ignored.contains(object)) race_acquire(object);
}

long arrive(const void* barrier) {
    race_release(barrier);
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    const long round = t.rounds[{barrier, pthread_self()}]++;
    double& at = t.arrivals[{barrier, round}];
    at = std::max(at, order().clock_us);
    return round;
}

void leave(const void* barrier, long round) {
    race_acquire(barrier);
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    auto it = t.arrivals.find({barrier, round});
    if (it != t.arrivals.end()) order().clock_us = std::max(order().clock_us, it->second);
    if (round > 0) t.arrivals.erase({barrier, round - 1});
}

void forget_barrier(const void* barrier) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    std::erase_if(t.arrivals, [&](const auto& entry) { return entry.first.first == barrier; });
    std::erase_if(t.rounds, [&](const auto& entry) { return entry.first.first == barrier; });
}

}  // namespace host_order

double host_order_floor_us() { return order().clock_us; }

void host_order_note_clock(double clock_us) { order().clock_us = std::max(order().clock_us, clock_us); }

bool host_order_knows_start() { return order().start_known; }

void host_order_new_machine() {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    t.released.clear();
    t.arrivals.clear();
    t.rounds.clear();
    g_machine.fetch_add(1, std::memory_order_acq_rel);
}

void host_order_ignore(const void* object) {
    Table& t = table();
    std::lock_guard<SpinLock> lock(t.lock);
    t.ignored.insert(object);
}

}  // namespace mgpu::sim::rt

using namespace mgpu::sim::rt;
using namespace mgpu::sim::rt::host_order;

// ---- threads ----------------------------------------------------------------------------------

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attributes, void* (*routine)(void*),
                              void* argument) {
    MGPU_NEXT(pthread_create);
    Hook hook;
    if (!hook) return real(thread, attributes, routine, argument);
    auto* start = new Start{routine, argument, order().clock_us, program_clock_branch()};
    const int result = real(thread, attributes, start_thread, start);
    if (result != 0) delete start;
    return result;
}

extern "C" [[noreturn]] void pthread_exit(void* value) {
    MGPU_NEXT(pthread_exit);
    {
        Hook hook;
        if (hook) release_as_end(key(pthread_self()));
    }
    real(value);
    __builtin_unreachable();
}

extern "C" int pthread_join(pthread_t thread, void** value) {
    MGPU_NEXT(pthread_join);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(thread, value);
    if (hook && result == 0) acquire(key(thread));
    return result;
}

extern "C" int pthread_tryjoin_np(pthread_t thread, void** value) {
    MGPU_NEXT(pthread_tryjoin_np);
    Hook hook;
    const int result = real(thread, value);
    if (hook && result == 0) acquire(key(thread));
    return result;
}

extern "C" int pthread_timedjoin_np(pthread_t thread, void** value, const struct timespec* until) {
    MGPU_NEXT(pthread_timedjoin_np);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(thread, value, until);
    if (hook && result == 0) acquire(key(thread));
    return result;
}

extern "C" int pthread_clockjoin_np(pthread_t thread, void** value, clockid_t clock, const struct timespec* until) {
    MGPU_NEXT(pthread_clockjoin_np);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(thread, value, clock, until);
    if (hook && result == 0) acquire(key(thread));
    return result;
}

// ---- mutexes ----------------------------------------------------------------------------------

extern "C" int pthread_mutex_lock(pthread_mutex_t* mutex) {
    MGPU_NEXT(pthread_mutex_lock);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(mutex);
    if (hook && result == 0) acquire(mutex);
    return result;
}

extern "C" int pthread_mutex_trylock(pthread_mutex_t* mutex) {
    MGPU_NEXT(pthread_mutex_trylock);
    Hook hook;
    const int result = real(mutex);
    if (hook && result == 0) acquire(mutex);
    return result;
}

extern "C" int pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* until) {
    MGPU_NEXT(pthread_mutex_timedlock);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(mutex, until);
    if (hook && result == 0) acquire(mutex);
    return result;
}

extern "C" int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock, const struct timespec* until) {
    MGPU_NEXT(pthread_mutex_clocklock);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(mutex, clock, until);
    if (hook && result == 0) acquire(mutex);
    return result;
}

extern "C" int pthread_mutex_unlock(pthread_mutex_t* mutex) {
    MGPU_NEXT(pthread_mutex_unlock);
    {
        Hook hook;
        if (hook) release(mutex);
    }
    return real(mutex);
}

extern "C" int pthread_mutex_destroy(pthread_mutex_t* mutex) {
    MGPU_NEXT(pthread_mutex_destroy);
    {
        Hook hook;
        if (hook) forget(mutex);
    }
    return real(mutex);
}

// ---- condition variables ----------------------------------------------------------------------
// The wait gives the mutex up and takes it back inside the C library, where no hook sees it: the
// wait itself releases and acquires it.

extern "C" int pthread_cond_wait(pthread_cond_t* condition, pthread_mutex_t* mutex) {
    MGPU_NEXT(pthread_cond_wait, "GLIBC_2.3.2");
    Hook hook;
    if (hook) release(mutex);
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(condition, mutex);
    if (hook) {
        acquire(condition);
        acquire(mutex);
    }
    return result;
}

extern "C" int pthread_cond_timedwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                      const struct timespec* until) {
    MGPU_NEXT(pthread_cond_timedwait, "GLIBC_2.3.2");
    Hook hook;
    if (hook) release(mutex);
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(condition, mutex, until);
    if (hook) {
        if (result == 0) acquire(condition);
        acquire(mutex);
    }
    return result;
}

extern "C" int pthread_cond_clockwait(pthread_cond_t* condition, pthread_mutex_t* mutex, clockid_t clock,
                                      const struct timespec* until) {
    MGPU_NEXT(pthread_cond_clockwait);
    Hook hook;
    if (hook) release(mutex);
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(condition, mutex, clock, until);
    if (hook) {
        if (result == 0) acquire(condition);
        acquire(mutex);
    }
    return result;
}

extern "C" int pthread_cond_signal(pthread_cond_t* condition) {
    MGPU_NEXT(pthread_cond_signal, "GLIBC_2.3.2");
    {
        Hook hook;
        if (hook) release(condition);
    }
    return real(condition);
}

extern "C" int pthread_cond_broadcast(pthread_cond_t* condition) {
    MGPU_NEXT(pthread_cond_broadcast, "GLIBC_2.3.2");
    {
        Hook hook;
        if (hook) release(condition);
    }
    return real(condition);
}

extern "C" int pthread_cond_destroy(pthread_cond_t* condition) {
    MGPU_NEXT(pthread_cond_destroy, "GLIBC_2.3.2");
    {
        Hook hook;
        if (hook) forget(condition);
    }
    return real(condition);
}

// ---- read-write locks -------------------------------------------------------------------------

extern "C" int pthread_rwlock_rdlock(pthread_rwlock_t* lock) {
    MGPU_NEXT(pthread_rwlock_rdlock);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(lock);
    if (hook && result == 0) acquire(lock);
    return result;
}

extern "C" int pthread_rwlock_wrlock(pthread_rwlock_t* lock) {
    MGPU_NEXT(pthread_rwlock_wrlock);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(lock);
    if (hook && result == 0) acquire(lock);
    return result;
}

extern "C" int pthread_rwlock_tryrdlock(pthread_rwlock_t* lock) {
    MGPU_NEXT(pthread_rwlock_tryrdlock);
    Hook hook;
    const int result = real(lock);
    if (hook && result == 0) acquire(lock);
    return result;
}

extern "C" int pthread_rwlock_trywrlock(pthread_rwlock_t* lock) {
    MGPU_NEXT(pthread_rwlock_trywrlock);
    Hook hook;
    const int result = real(lock);
    if (hook && result == 0) acquire(lock);
    return result;
}

extern "C" int pthread_rwlock_unlock(pthread_rwlock_t* lock) {
    MGPU_NEXT(pthread_rwlock_unlock);
    {
        Hook hook;
        if (hook) release(lock);
    }
    return real(lock);
}

// ---- barriers and semaphores ------------------------------------------------------------------

extern "C" int pthread_barrier_wait(pthread_barrier_t* barrier) {
    MGPU_NEXT(pthread_barrier_wait);
    Hook hook;
    const long round = hook ? arrive(barrier) : 0;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(barrier);
    if (hook) leave(barrier, round);
    return result;
}

extern "C" int pthread_barrier_destroy(pthread_barrier_t* barrier) {
    MGPU_NEXT(pthread_barrier_destroy);
    {
        Hook hook;
        if (hook) forget_barrier(barrier);
    }
    return real(barrier);
}

extern "C" int sem_post(sem_t* semaphore) {
    MGPU_NEXT(sem_post);
    {
        Hook hook;
        if (hook) release(semaphore);
    }
    return real(semaphore);
}

extern "C" int sem_wait(sem_t* semaphore) {
    MGPU_NEXT(sem_wait);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(semaphore);
    if (hook && result == 0) acquire(semaphore);
    return result;
}

extern "C" int sem_trywait(sem_t* semaphore) {
    MGPU_NEXT(sem_trywait);
    Hook hook;
    const int result = real(semaphore);
    if (hook && result == 0) acquire(semaphore);
    return result;
}

extern "C" int sem_timedwait(sem_t* semaphore, const struct timespec* until) {
    MGPU_NEXT(sem_timedwait);
    Hook hook;
    Blocked blocked(static_cast<bool>(hook));
    const int result = real(semaphore, until);
    if (hook && result == 0) acquire(semaphore);
    return result;
}

// ---- the futex system call --------------------------------------------------------------------
// libstdc++ waits with it (std::future's wait, and std::latch, std::barrier, std::counting_semaphore
// and std::atomic<T>::wait through the waiting pool): a wake releases the word, a wait that
// returns acquires it. A wait that finds its condition met makes no call and orders nothing.

extern "C" long syscall(long number, ...) {
    MGPU_NEXT(syscall);
    std::va_list list;
    va_start(list, number);
    long a[6];
    for (long& argument : a) argument = va_arg(list, long);
    va_end(list);
    if (number != SYS_futex) return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    Hook hook;
    if (!hook) return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    const void* word = reinterpret_cast<const void*>(a[0]);
    const int operation = static_cast<int>(a[1]) & FUTEX_CMD_MASK;
    switch (operation) {
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
    case FUTEX_WAKE_OP:
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE: release(word); return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET: {
        long result = 0;
        int error = 0;
        {
            Blocked blocked(true);
            result = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
            error = errno;
            if (result == 0 || error == EAGAIN) acquire(word);
        }
        errno = error;
        return result;
    }
    default: return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
}
