// The runtime's own host thread, on which host functions queued with cudaLaunchHostFunc and
// cudaStreamAddCallback run. CUDA forbids API calls inside them (the driver's thread holds the
// context they would need); a call made there ends the program with a message saying so, where
// the real runtime may fail it with cudaErrorNotPermitted or deadlock.
#pragma once

#include <functional>

#include "mgpu/sim/site.h"

namespace mgpu::sim::rt {

// Runs body on a thread of its own and waits for it.
void run_on_runtime_thread(const std::function<void()>& body);

// Called first by every API call: stops the program when it comes from inside a host function.
void refuse_call_from_host_function(const char* name, Site site);

}  // namespace mgpu::sim::rt
