// Control of the simulator's NCCL from harness code (benches, the checker). Programs never need it.
#pragma once

#include <cstddef>
#include <string>

namespace mgpu::sim {

// Whether collectives and sends move and reduce the data (the default) or only take their
// modelled time. A bench of 1 GiB collectives on eight ranks needs the time, not 16 GiB of
// host memory written.
void set_nccl_data_movement(bool move);

// Called instead of printing and exiting when the simulator stops a program at an NCCL hang
// (ranks that can never meet, a wait for a failed operation), with the whole diagnosis. A checker
// turns it into a failed case; the handler must not return (if it does, the program exits as usual).
using StopHandler = void (*)(const std::string& diagnosis);
void set_nccl_stop_handler(StopHandler handler);

// Communicators made and neither destroyed nor aborted yet, on the machine that is up now.
std::size_t live_nccl_comms();
// Communicators ended with ncclCommAbort since the machine came up.
std::size_t aborted_nccl_comms();

}  // namespace mgpu::sim
