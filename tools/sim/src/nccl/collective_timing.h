// How long an NCCL operation takes: NCCL's own tuning model (latency plus bytes over bandwidth for
// each algorithm and protocol, the fastest one chosen) over the links of the simulated machine.
// Constants and formulas: lessons-1-2-4.md section 3.12, from NCCL's src/graph/tuning.cc.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "comm_state.h"

namespace mgpu::sim::nccl {

struct Timing {
    double us = 0;
    std::string algorithm;   // "Ring", "Tree", "P2P", "Local"
    std::string protocol;    // "LL", "LL128", "Simple"
};

// `devices` are the communicator's devices in rank order; `count` is the count of the call
// (per rank for all-gather, reduce-scatter, all-to-all, gather and scatter).
Timing collective_time(Func func, std::size_t count, std::size_t element_size, const std::vector<int>& devices);

// One send and its receive between two devices (the same device for a rank sending to itself).
Timing p2p_time(std::size_t bytes, int from_device, int to_device);

// The bus bandwidth NCCL's Simple protocol reaches on the ring through these devices (GB/s).
double ring_bus_gbps(const std::vector<int>& devices);

}  // namespace mgpu::sim::nccl
