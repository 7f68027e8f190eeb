#include "collective_timing.h"

#include <algorithm>
#include <limits>

#include "runtime/runtime_state.h"

namespace mgpu::sim::nccl {

namespace {

enum Protocol { LL = 0, LL128 = 1, Simple = 2 };
constexpr const char* kProtocolNames[] = {"LL", "LL128", "Simple"};

// Microseconds, per protocol (LL, LL128, Simple).
constexpr double kRingBaseLatency[] = {6.6, 14.0, 8.4};
constexpr double kTreeBaseLatency[] = {6.8, 14.0, 8.4};
constexpr double kNvlinkRingHopLatency[] = {0.6, 1.9, 3.4};
constexpr double kNvlinkTreeHopLatency[] = {0.6, 1.25, 4.0};
constexpr double kPciRingHopLatency[] = {1.0, 2.5, 5.7};
constexpr double kPciTreeHopLatency[] = {1.0, 1.9, 4.0};

// LL moves 8 bytes of data in 16 (half the bandwidth), LL128 120 in 128; on Hopper inside one
// node NCCL caps LL at 141 GB/s in all. LL128 is enabled by default over NVLink only.
constexpr double kLowLatencyFraction = 0.5;
constexpr double kLowLatencyCapGbps = 141.0;
constexpr double kLL128Fraction = 0.92;
// The tree all-reduce keeps 92% of the ring's bus bandwidth and moves the data twice (ratio 0.5).
constexpr double kTreeBandwidthFraction = 0.92;
constexpr double kTreeAlgorithmRatio = 0.5;

// Published ring bus bandwidth on eight H100/H200 over NVLink 4 with NVLS off: 365-370 GB/s
// (nccl#1455, nccl-tests#212), against the 375 GB/s a peer copy reaches on the same links
// (the hgx-h200-8 preset's link speed). NCCL's Simple ring keeps that fraction of the link.
constexpr double kNvlinkRingEfficiency = 370.0 / 375.0;

struct Path {
    double bus_gbps = std::numeric_limits<double>::infinity();
    bool all_nvlink = true;
};

// Peer pairs move data over their link; pairs that cannot peer go through host memory (NCCL's
// SHM transport), as fast as the machine's staged peer copies.
double pair_gbps(int from, int to, bool& nvlink) {
    const rt::Runtime& r = rt::runtime();
    const LinkSpec& link = r.machine.links[from][to];
    if (link.can_peer && link.type == LinkType::NVLink) return link.gbps * kNvlinkRingEfficiency;
    nvlink = false;
    if (link.can_peer && link.gbps > 0) return link.gbps;
    return r.machine.cost.staged_peer_gbps;
}

Path ring_path(const std::vector<int>& devices) {
    Path path;
    const std::size_t n = devices.size();
    for (std::size_t i = 0; i < n; ++i) {
        const int from = devices[i], to = devices[(i + 1) % n];
        if (from == to) continue;
        path.bus_gbps = std::min(path.bus_gbps, pair_gbps(from, to, path.all_nvlink));
    }
    return path;
}

double protocol_gbps(Protocol protocol, double bus_gbps) {
    switch (protocol) {
    case LL: return std::min(bus_gbps * kLowLatencyFraction, kLowLatencyCapGbps);
    case LL128: return bus_gbps * kLL128Fraction;
    case Simple: return bus_gbps;
    }
    return bus_gbps;
}

// Bytes NCCL's model counts for the operation (the whole buffer for gathers and scatters).
double model_bytes(Func func, std::size_t count, std::size_t element_size, int nranks) {
    const double bytes = static_cast<double>(count) * static_cast<double>(element_size);
    switch (func) {
    case Func::AllGather:
    case Func::ReduceScatter:
    case Func::AlltoAll:
    case Func::Gather:
    case Func::Scatter: return bytes * nranks;
    default: return bytes;
    }
}

// Ring steps: all-reduce is a reduce-scatter then an all-gather.
int ring_steps(Func func, int nranks) {
    if (func == Func::AllReduce) return 2 * (nranks - 1);
    if (func == Func::Broadcast || func == Func::Reduce) return nranks;
    return nranks - 1;
}

// Algorithm bandwidth over bus bandwidth on the ring.
double ring_ratio(Func func, int nranks) {
    if (func == Func::Broadcast || func == Func::Reduce) return 1.0;
    return static_cast<double>(nranks) / ring_steps(func, nranks);
}

}  // namespace

double ring_bus_gbps(const std::vector<int>& devices) { return ring_path(devices).bus_gbps; }

Timing collective_time(Func func, std::size_t count, std::size_t element_size, const std::vector<int>& devices) {
    const rt::Runtime& r = rt::runtime();
    const int nranks = static_cast<int>(devices.size());
    const double bytes = model_bytes(func, count, element_size, nranks);
    if (nranks <= 1) {
        // One rank: a copy inside the device, when the buffers differ.
        const double gbps = r.machine.devices[devices.front()].d2d_copy_gbps;
        return Timing{r.machine.cost.copy_latency_us + bytes / (1e3 * gbps), "Local", "Simple"};
    }
    const Path path = ring_path(devices);
    const double* ring_hop = path.all_nvlink ? kNvlinkRingHopLatency : kPciRingHopLatency;
    const double* tree_hop = path.all_nvlink ? kNvlinkTreeHopLatency : kPciTreeHopLatency;
    Timing best{std::numeric_limits<double>::infinity(), "", ""};
    for (Protocol protocol : {LL, LL128, Simple}) {
        if (protocol == LL128 && !path.all_nvlink) continue;
        const double bus = protocol_gbps(protocol, path.bus_gbps);
        const int steps = ring_steps(func, nranks);
        const bool pipelined_chain = func == Func::Broadcast || func == Func::Reduce;
        const double ring_latency = kRingBaseLatency[protocol] + (pipelined_chain ? 1 : steps) * ring_hop[protocol];
        const double ring_us = ring_latency + bytes / (1e3 * bus * ring_ratio(func, nranks));
        if (ring_us < best.us) best = Timing{ring_us, "Ring", kProtocolNames[protocol]};
        if (func != Func::AllReduce) continue;
        // Inside one node the tree's latency grows linearly with the ranks (up and down the chain).
        const double tree_latency = kTreeBaseLatency[protocol] + 2.0 * (nranks - 1) * tree_hop[protocol];
        const double tree_us = tree_latency + bytes / (1e3 * bus * kTreeBandwidthFraction * kTreeAlgorithmRatio);
        if (tree_us < best.us) best = Timing{tree_us, "Tree", kProtocolNames[protocol]};
    }
    return best;
}

Timing p2p_time(std::size_t bytes, int from_device, int to_device) {
    const rt::Runtime& r = rt::runtime();
    if (from_device == to_device) {
        const double gbps = r.machine.devices[from_device].d2d_copy_gbps;
        return Timing{r.machine.cost.copy_latency_us + static_cast<double>(bytes) / (1e3 * gbps), "P2P", "Simple"};
    }
    bool nvlink = true;
    const double link_gbps = pair_gbps(from_device, to_device, nvlink);
    const double* hop = nvlink ? kNvlinkRingHopLatency : kPciRingHopLatency;
    Timing best{std::numeric_limits<double>::infinity(), "P2P", ""};
    for (Protocol protocol : {LL, LL128, Simple}) {
        if (protocol == LL128 && !nvlink) continue;
        const double us = kRingBaseLatency[protocol] + hop[protocol] +
                          static_cast<double>(bytes) / (1e3 * protocol_gbps(protocol, link_gbps));
        if (us < best.us) best = Timing{us, "P2P", kProtocolNames[protocol]};
    }
    return best;
}

}  // namespace mgpu::sim::nccl
