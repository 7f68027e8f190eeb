// Host synchronisation carries the modelled clock. Each host thread has a modelled clock that
// only its own runtime calls move, so a thread the program has ordered after another (by a
// join, a lock handed over, a condition variable, a barrier) would otherwise go on from its own,
// earlier time: later work would be drawn beside earlier work, and reported as racing with it.
//
// The simulator sees the program's synchronisation where it goes through the C library or the
// OpenMP runtime: it defines pthread_create, pthread_join, the mutex, condition variable,
// read-write lock, barrier and semaphore calls, the futex system call (std::future, std::latch,
// std::barrier and std::atomic waits when they block), and the OpenMP entry points for parallel
// regions, barriers, critical sections and locks, each passing on to the real one. A release
// (an unlock, a signal, a thread's end, a futex wake) leaves the releasing thread's modelled time
// on the object; an acquire (a lock, the return of a wait or a join) raises the acquiring thread's
// clock to it. A thread starts at its creator's time. What such a call cannot see (a spin on an
// atomic, a wait that found its condition already met without blocking) orders nothing; the
// threads keep their own clocks there. docs/host-threads.md says which constructs are seen.
//
// The time a thread spends blocked in these calls is not the program's own time for its timers
// (program_clock.h): it waits for the other thread's modelled work, not for the simulator.
#pragma once

namespace mgpu::sim::rt {

// The modelled time host synchronisation has ordered the calling thread after; ApiCall raises
// the thread's clock to it as each call begins.
double host_order_floor_us();

// After each runtime call: the calling thread's modelled clock, as its next release hands it on.
void host_order_note_clock(double clock_us);

// True for a thread created through pthread_create while the program ran (std::thread, OpenMP's
// team): its clock starts at host_order_floor_us(), its creator's time at the creation.
bool host_order_knows_start();

// The machine is brought up again (its clocks start over): what the threads and objects carried
// belonged to the one before.
void host_order_new_machine();

// The simulator's own lock: the program's calls never order anything through it.
void host_order_ignore(const void* object);

// The steps the hooks share (host_order.cpp for the C library's calls, openmp_order.cpp for
// OpenMP's).
namespace host_order {

// Active while the program's own code made the hooked call (not the simulator, not a hook).
class Hook {
public:
    Hook();
    ~Hook();
    Hook(const Hook&) = delete;
    Hook& operator=(const Hook&) = delete;
    explicit operator bool() const { return active_; }

private:
    bool active_;
};

// Leaves out of the program's own time the real time a blocking call takes.
class Blocked {
public:
    explicit Blocked(bool active);
    ~Blocked();
    Blocked(const Blocked&) = delete;
    Blocked& operator=(const Blocked&) = delete;

private:
    bool active_;
};

double clock_us();               // the calling thread's time for host order
void raise_to(double clock_us);  // an acquire of a known time
void release(const void* object);
void acquire(const void* object);
// A barrier's round: every thread of a round arrives before any leaves.
long arrive(const void* barrier);
void leave(const void* barrier, long round);
void forget_barrier(const void* barrier);

}  // namespace host_order

}  // namespace mgpu::sim::rt
