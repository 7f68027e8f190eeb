// The order host synchronisation gives, told to ThreadSanitizer where a program runs under it (the
// judge's race build, docs/host-races.md). ThreadSanitizer sees the C library's locks and thread
// joins itself, but not what an uninstrumented OpenMP runtime does (its team start, barriers and
// critical sections go through futexes and spins): without these calls every access before and
// after a parallel region would look unordered. host_order.cpp and openmp_order.cpp call them
// where they carry the modelled clock: a release where the clock is left on an object, an acquire
// where it is taken. Without ThreadSanitizer they do nothing.
#pragma once

namespace mgpu::sim::rt {

void race_release(const void* object);
void race_acquire(const void* object);

}  // namespace mgpu::sim::rt
