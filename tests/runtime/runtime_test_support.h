// Helpers for the runtime's smoke tests: a fresh machine per test and kernel launches built by
// hand, as the launch template builds them, so the runtime is tested on its own.
#pragma once

#include <cstdio>
#include <fcntl.h>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include <cuda_runtime.h>

#include "mgpu/sim/control.h"
#include "mgpu/sim/kernel_submit.h"

namespace runtime_test {

inline void bring_up(const std::string& topology, const std::string& schedule = "eager",
                     mgpu::sim::Faults faults = {}) {
    mgpu::sim::Options options;
    options.topology = topology;
    options.schedule = mgpu::sim::parse_schedule(schedule);
    options.faults = faults;
    options.apply_cuda_visible_devices = false;
    mgpu::sim::reset_machine(options);
}

inline cudaError_t launch(const std::string& name, dim3 grid, dim3 block, cudaStream_t stream,
                          std::vector<const void*> pointers, std::function<void()> body,
                          std::size_t dynamic_shared = 0, const void* function = nullptr) {
    mgpu::sim::KernelLaunch launch;
    launch.name = name;
    launch.function = function;
    launch.grid = grid;
    launch.block = block;
    launch.dynamic_shared = dynamic_shared;
    launch.stream = stream;
    launch.site = mgpu::sim::Site{"runtime_test.cu", 42};
    launch.pointer_args = std::move(pointers);
    launch.run_grid = std::move(body);
    return mgpu::sim::submit_kernel(std::move(launch));
}

// Everything written to stderr while it lives.
class StderrCapture {
public:
    StderrCapture() {
        std::fflush(stderr);
        saved_ = dup(2);
        file_ = std::tmpfile();
        dup2(fileno(file_), 2);
    }
    ~StderrCapture() { restore(); }
    std::string text() {
        restore();
        std::string result;
        std::rewind(file_);
        char buffer[4096];
        std::size_t n;
        while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) result.append(buffer, n);
        return result;
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        dup2(saved_, 2);
        close(saved_);
        saved_ = -1;
    }
    int saved_ = -1;
    std::FILE* file_ = nullptr;
};

}  // namespace runtime_test
