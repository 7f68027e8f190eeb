// Control of the simulator's NCCL from harness code (benches). Programs never need it.
#pragma once

namespace mgpu::sim {

// Whether collectives and sends move and reduce the data (the default) or only take their
// modelled time. A bench of 1 GiB collectives on eight ranks needs the time, not 16 GiB of
// host memory written.
void set_nccl_data_movement(bool move);

}  // namespace mgpu::sim
