// The figures bench/p2p/p2p_matrix.cu prints, read back, and how a measured run is held against
// the simulator's run of the same program.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mgpu::cli {

struct P2pFigure {
    std::string kind;        // uni, bi, lat, solution-copy, memcpy-peer-async
    int src = 0, dst = 0;
    int p2p = 0;             // 1: peer access was enabled for the pair
    std::size_t bytes = 0;
    double ms = 0;
};

struct P2pRun {
    bool finished = false;                        // "p2p-done" was printed
    int devices = -1;                             // "p2p devices count=N"; -1 when missing
    std::map<std::pair<int, int>, bool> access;   // cudaDeviceCanAccessPeer per ordered pair
    std::vector<P2pFigure> figures;
    std::vector<std::string> notes;
};

P2pRun parse_p2p_output(const std::string& text);

const P2pFigure* find_figure(const P2pRun& run, const std::string& kind, int src, int dst, int p2p);

// Bytes per second in units of 10^9 (GB/s, as nvidia's samples print them).
double gigabytes_per_second(std::size_t bytes, double ms);

// The figure people read for a measurement: GB/s for uni and bi, microseconds for lat.
double shown_value(const P2pFigure& figure);
const char* shown_unit(const std::string& kind);

// Modelled over measured, in the shown unit (so above 1 means the model is faster for GB/s).
double model_ratio(const P2pFigure& real, const P2pFigure& model);

// The band a modelled figure must fall in to agree with the measured one (bench calibrate's).
inline constexpr double kRatioLow = 0.8, kRatioHigh = 1.25;
inline bool ratio_agrees(double ratio) { return ratio >= kRatioLow && ratio <= kRatioHigh; }

// Lesson 3's rule: copy_between_devices reaches at least this share of cudaMemcpyPeerAsync's speed.
inline constexpr double kSolutionCopyTarget = 0.90;
// cudaMemcpyPeerAsync time over the solution's time for the same copy, or nullopt when either is missing.
std::optional<double> solution_copy_ratio(const P2pRun& run);

}  // namespace mgpu::cli
