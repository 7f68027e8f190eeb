// The machine a lesson 3 test case runs on: a simulator preset, a schedule, and optionally
// CUDA_VISIBLE_DEVICES. Every case starts from a fresh machine, so nothing a previous call of
// the student's code did (or broke) carries over.
#pragma once

#include <string>
#include <utility>

namespace suite {

// The suite is built twice: for the simulator, and for real GPUs (MGPU_CHECK_REAL_GPU, the
// `cuda` backend). CUPTI's trace has no simulator details: no engine, no staged or peer_access
// flag on an operation, no file:line on a call. Checks that need those skip that part there.
#ifdef MGPU_CHECK_REAL_GPU
inline constexpr bool kOnRealGpu = true;
#else
inline constexpr bool kOnRealGpu = false;
#endif

struct Machine {
    Machine(std::string topology_name, std::string schedule_text = "eager", std::string visible = "")
        : topology(std::move(topology_name)), schedule(std::move(schedule_text)), visible_devices(std::move(visible)) {}

    std::string topology;          // a preset: hgx-h200-8, islands-2x2, pcie-4, h200
    std::string schedule;          // eager, lazy, shuffle:SEED
    std::string visible_devices;   // CUDA_VISIBLE_DEVICES ("" = unset: every device)
};

// Brings the machine up and names the scenario for the judge. Returns false when the case must
// not run here (the run is restricted to another machine, or the backend cannot host it); the
// case has then been marked skipped and must return.
bool start(const Machine& machine, const std::string& inputs = "");

// Number of devices the runtime shows now, and whether the machine lets `from` reach `to`
// (the topology's answer, independent of the code under test).
int device_count();
bool machine_can_peer(int from, int to);

}  // namespace suite
