// The runtime's own host thread, on which host functions queued with cudaLaunchHostFunc and
// cudaStreamAddCallback run. CUDA forbids API calls inside them: on an H200 with CUDA 13,
// cudaGetDevice and cudaMalloc made there both return cudaErrorNotPermitted (800), and so does
// every call here that checks the machine's state (machine_status).
#pragma once

#include <functional>

namespace mgpu::sim::rt {

// Runs body on a thread of its own and waits for it.
void run_on_runtime_thread(const std::function<void()>& body);

// Whether the calling thread is running a host function. The thread that runs the stream's work
// holds the simulator's lock and waits for the host function to return, so calls made inside it
// use the runtime's state without taking the lock (no other thread can be using it then).
bool inside_host_function();

}  // namespace mgpu::sim::rt
