#include "host_function.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "api_call.h"

namespace mgpu::sim::rt {

namespace {
thread_local bool inside_host_function = false;
}

void run_on_runtime_thread(const std::function<void()>& body) {
    std::exception_ptr failure;
    std::thread runner([&] {
        inside_host_function = true;
        try {
            body();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    runner.join();
    if (failure) std::rethrow_exception(failure);
}

void refuse_call_from_host_function(const char* name, Site site) {
    if (!inside_host_function) return;
    std::fprintf(stderr,
                 "%s at %s was called inside a host function (cudaLaunchHostFunc or cudaStreamAddCallback).\n"
                 "  CUDA forbids API calls there: the runtime's thread that runs host functions cannot wait for\n"
                 "  the device, so such a call fails with cudaErrorNotPermitted or deadlocks. Make the call after\n"
                 "  the stream is synchronised, from the program's own thread.\n",
                 name, where(site).c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace mgpu::sim::rt
