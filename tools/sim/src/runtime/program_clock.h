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

}  // namespace mgpu::sim::rt
