#include "host_function.h"

#include <exception>
#include <thread>

namespace mgpu::sim::rt {

namespace {
thread_local bool inside_host_function_now = false;
}

void run_on_runtime_thread(const std::function<void()>& body) {
    std::exception_ptr failure;
    std::thread runner([&] {
        inside_host_function_now = true;
        try {
            body();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    runner.join();
    if (failure) std::rethrow_exception(failure);
}

bool inside_host_function() { return inside_host_function_now; }

}  // namespace mgpu::sim::rt
