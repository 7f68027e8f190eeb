// The clock a simulated program reads. Under `tools/mgpu run` (MGPU_PROGRAM_CLOCK=modelled) the
// program's own time reads (clock_gettime, gettimeofday, and so std::chrono and omp_get_wtime)
// see the modelled time its CUDA calls took plus the real time its own code took between them, so
// that a program that times its GPU work with a host timer prints what it would print on the
// modelled machine, not how fast the simulator ran. The simulator's own reads, inside a call or on
// its own threads, keep the real clock. Without the variable every read is the real clock.
#pragma once

namespace mgpu::sim::rt {

// Brackets one runtime call on the calling thread (ApiCall does it); `modelled_us` is the
// thread's modelled host clock when the outermost call ends.
void program_clock_enter();
void program_clock_leave(double modelled_us);

// A thread of the simulator itself (the NCCL watcher): its time reads stay real.
void mark_simulator_thread();

// True while the calling thread runs the program's own code: outside every runtime call, on a
// thread that is not the simulator's.
bool running_program_code();

// A host wait (a join, a lock, a barrier) the program blocks in: the real time it takes is the
// simulator running the other threads, not the program's own, so it is left out, and the
// thread's modelled clock goes on from `modelled_floor_us` if that is later (host_order.h).
void program_clock_wait_begin();
void program_clock_wait_end(double modelled_floor_us);
// As wait_end, whether or not the thread was waiting: where it starts the program's code again
// after time that was not its own (an OpenMP thread starting its part of a region).
void program_clock_resume(double modelled_floor_us);

// A new thread's clock starts where its creator's stood at pthread_create.
struct ProgramClockBranch {
    bool valid = false;
    double modelled_us = 0;
    double outside_us = 0;
};
ProgramClockBranch program_clock_branch();
void program_clock_start_from(const ProgramClockBranch& branch);

}  // namespace mgpu::sim::rt
