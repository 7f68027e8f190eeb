// The real-GPU backend's tracer (CUPTI). start() before the first CUDA call of a scenario;
// trace() flushes the activity buffers and returns everything recorded since clear().
#pragma once

#include <cstddef>
#include <set>
#include <utility>

#include "mgpu/trace.h"

namespace mgpu::cupti {

struct Counters {
    long streams = 0;                           // created minus destroyed
    long events = 0;
    long pinned_host_allocations = 0;
    long registered_host_ranges = 0;            // cudaHostRegister minus cudaHostUnregister
    std::set<std::pair<int, int>> open_directions;   // (from, to) peer access enabled now
};

void start();
void flush();
void clear();
const mgpu::trace::Trace& trace();
const Counters& counters();
void reset_counters();   // after every device was reset: nothing is live any more
std::size_t device_bytes_in_use(int device);
std::size_t live_device_allocations(int device);
double host_now_us();

}  // namespace mgpu::cupti
