#include "launch_recorder.h"

#include <fstream>
#include <functional>
#include <stdexcept>

namespace kernel_test {
namespace {

Execution current_execution = Execution::Immediate;
std::vector<LaunchRecord> recorded;
std::vector<std::function<void()>> pending;
std::optional<mgpu::sim::KernelFault> fault;

void run(const std::function<void()>& grid) {
    fault.reset();
    try {
        grid();
    } catch (const mgpu::sim::KernelFault& raised) {
        fault = raised;
    }
}

}  // namespace

void set_execution(Execution execution) { current_execution = execution; }
const std::vector<LaunchRecord>& launches() { return recorded; }
void forget_launches() { recorded.clear(); }

void run_deferred() {
    std::vector<std::function<void()>> grids;
    grids.swap(pending);
    for (const auto& grid : grids) run(grid);
}

const std::optional<mgpu::sim::KernelFault>& last_fault() { return fault; }

int line_of(const std::string& file, const std::string& marker) {
    std::ifstream in(std::string(KERNEL_TEST_SOURCE_DIR) + "/" + file);
    if (!in) throw std::runtime_error("cannot read " + file);
    std::string text;
    for (int line = 1; std::getline(in, text); ++line)
        if (text.find(marker) != std::string::npos) return line;
    throw std::runtime_error("no line of " + file + " contains " + marker);
}

}  // namespace kernel_test

namespace mgpu::sim {

cudaError_t submit_kernel(KernelLaunch&& launch) {
    kernel_test::recorded.push_back({launch.name, launch.function, launch.grid, launch.block, launch.dynamic_shared,
                                     launch.stream, launch.site, launch.pointer_args});
    if (kernel_test::current_execution == kernel_test::Execution::Deferred)
        kernel_test::pending.push_back(std::move(launch.run_grid));
    else
        kernel_test::run(launch.run_grid);
    return cudaSuccess;
}

}  // namespace mgpu::sim
