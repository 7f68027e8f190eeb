// Options as text (MGPU_SCHEDULE, MGPU_FAULTS, peer pairs): parsed by options.cpp, which needs
// control.h only, so the real-GPU backend (tools/cupti) links the same parser as the simulator.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mgpu/sim/control.h"

namespace mgpu::sim {

Faults parse_faults(const std::string& text);
std::vector<std::pair<int, int>> parse_peer_pairs(const std::string& text);

}  // namespace mgpu::sim
