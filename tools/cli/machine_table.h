// What `mgpu topo` prints about a machine, in the user's language: the link matrix as nvidia-smi
// topo -m shows it, which ordered pairs can peer, a legend for the labels used, one line per
// device and the host links devices share. In English it is exactly the simulator's own
// describe_machine (which validate's reports keep); the labels of the matrices (GPU0, NV18, SYS,
// OK, NS, X) are nvidia-smi's and CUDA's, so they are never translated.
#pragma once

#include <string>

#include "mgpu/sim/machine.h"

namespace mgpu::cli {

std::string machine_table(const sim::MachineSpec& machine);

}  // namespace mgpu::cli
