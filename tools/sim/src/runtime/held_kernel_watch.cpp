#include "held_kernel_watch.h"

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "program_clock.h"
#include "runtime_state.h"
#include "scheduler.h"

namespace mgpu::sim::rt {
namespace {

void watch() {
    using namespace std::chrono_literals;
    Runtime& r = runtime();
    std::uint64_t last_seq = 0;
    int quiet_looks = 0;
    constexpr auto kLook = 20ms;
    for (;;) {
        std::this_thread::sleep_for(kLook);
        std::lock_guard<std::recursive_mutex> lock(r.mutex);
        if (r.held_kernels.empty() || r.next_api_seq != last_seq) {
            last_seq = r.next_api_seq;
            quiet_looks = 0;
            continue;
        }
        if (++quiet_looks * kLook < std::chrono::milliseconds(kHeldKernelQuietMs)) continue;
        quiet_looks = 0;
        release_quiet_held_kernels();
    }
}

}  // namespace

void watch_held_kernels() {
    static pid_t started_in = 0;
    static std::mutex starting;
    std::lock_guard<std::mutex> lock(starting);
    if (started_in == getpid()) return;
    started_in = getpid();
    std::thread([] {
        mark_simulator_thread();
        watch();
    }).detach();
}

}  // namespace mgpu::sim::rt
