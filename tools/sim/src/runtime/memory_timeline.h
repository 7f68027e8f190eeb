// When one device's memory is busy. Device-to-device copies, memsets and memory-bound kernels
// are limited by the same HBM: measured on an H200, a copy on one stream and a kernel on
// another take the sum of their times, not the longer one. Copies bound by a slower path (PCIe,
// NVLink, host staging) use a small share of HBM and are not booked here. Kernels and memsets
// already queue on the device's one compute engine, so in practice this orders device-to-device
// copies against them; an operation is booked here once, by the scheduler.
#pragma once

#include <map>

namespace mgpu::sim::rt {

class MemoryTimeline {
public:
    // Books `busy_us` of memory time at or after `from_us`, in the free gaps left by earlier
    // bookings (an operation queued later may still run in a gap before them), and returns the
    // time at which the booked work completes.
    double occupy(double from_us, double busy_us);

private:
    void book(double begin_us, double end_us);

    std::map<double, double> busy_;   // begin -> end, disjoint, adjacent ranges merged
};

}  // namespace mgpu::sim::rt
