#include "program_clock.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace mgpu::sim::rt {
namespace {

using ClockGettime = int (*)(clockid_t, struct timespec*);

// The C library's clock_gettime (through the vDSO where it has one), not the one below.
int real_clock_gettime(clockid_t clock, struct timespec* time) {
    static const ClockGettime next = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    if (next != nullptr && next != &clock_gettime) return next(clock, time);
    return static_cast<int>(syscall(SYS_clock_gettime, clock, time));
}

double real_monotonic_us() {
    struct timespec now {};
    real_clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

bool modelled_clock_asked() {
    static const bool asked = [] {
        const char* value = std::getenv("MGPU_PROGRAM_CLOCK");
        return value != nullptr && std::strcmp(value, "modelled") == 0;
    }();
    return asked;
}

// Per host thread: the modelled clock when its last call ended, the real time spent outside calls
// before that, and when that call ended.
struct ThreadClock {
    bool started = false;
    bool simulator = false;
    int depth = 0;
    bool waiting = false;
    double modelled_us = 0;
    double outside_us = 0;
    double left_at_us = 0;
};

thread_local ThreadClock this_thread;

// The real monotonic and wall-clock times when the program's clock was first used: its readings
// count from there.
struct Origin {
    double monotonic_us = 0;
    double realtime_us = 0;
};

const Origin& origin() {
    static const Origin first = [] {
        Origin o;
        o.monotonic_us = real_monotonic_us();
        struct timespec wall {};
        real_clock_gettime(CLOCK_REALTIME, &wall);
        o.realtime_us = static_cast<double>(wall.tv_sec) * 1e6 + static_cast<double>(wall.tv_nsec) / 1e3;
        return o;
    }();
    return first;
}

void start(ThreadClock& clock) {
    if (clock.started) return;
    clock.started = true;
    const double origin_us = origin().monotonic_us;
    clock.left_at_us = real_monotonic_us();
    // A thread that has made no call yet starts where the real clock is, measured from the origin.
    clock.outside_us = clock.left_at_us - origin_us;
}

// Microseconds since the origin on the program's clock.
double program_us(ThreadClock& clock) {
    start(clock);
    return clock.modelled_us + clock.outside_us + (real_monotonic_us() - clock.left_at_us);
}

bool reads_modelled_time(clockid_t id) {
    switch (id) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
        return true;
    default:
        return false;   // CPU-time clocks and the like stay what they are
    }
}

void to_timespec(double us, struct timespec* time) {
    const auto whole = static_cast<long long>(us);
    time->tv_sec = static_cast<time_t>(whole / 1000000);
    time->tv_nsec = static_cast<long>((whole % 1000000) * 1000 + static_cast<long long>((us - whole) * 1000));
}

bool program_reads_now() {
    return modelled_clock_asked() && !this_thread.simulator && this_thread.depth == 0;
}

}  // namespace

void program_clock_enter() {
    ThreadClock& clock = this_thread;
    if (clock.depth++ > 0 || !modelled_clock_asked()) return;
    start(clock);
    clock.outside_us += real_monotonic_us() - clock.left_at_us;
}

void program_clock_leave(double modelled_us) {
    ThreadClock& clock = this_thread;
    if (--clock.depth > 0 || !modelled_clock_asked()) return;
    clock.modelled_us = modelled_us;
    clock.left_at_us = real_monotonic_us();
}

void mark_simulator_thread() { this_thread.simulator = true; }

bool running_program_code() { return this_thread.depth == 0 && !this_thread.simulator; }

void program_clock_wait_begin() {
    ThreadClock& clock = this_thread;
    if (!modelled_clock_asked() || clock.depth > 0 || clock.simulator || clock.waiting) return;
    start(clock);
    clock.outside_us += real_monotonic_us() - clock.left_at_us;
    clock.waiting = true;
}

void program_clock_wait_end(double modelled_floor_us) {
    ThreadClock& clock = this_thread;
    if (!clock.waiting) return;
    clock.waiting = false;
    if (modelled_floor_us > clock.modelled_us) clock.modelled_us = modelled_floor_us;
    clock.left_at_us = real_monotonic_us();
}

void program_clock_resume(double modelled_floor_us) {
    ThreadClock& clock = this_thread;
    if (!modelled_clock_asked() || clock.depth > 0 || clock.simulator) return;
    start(clock);
    clock.waiting = false;
    if (modelled_floor_us > clock.modelled_us) clock.modelled_us = modelled_floor_us;
    clock.left_at_us = real_monotonic_us();
}

ProgramClockBranch program_clock_branch() {
    ThreadClock& clock = this_thread;
    if (!modelled_clock_asked() || clock.simulator) return {};
    start(clock);
    return {true, clock.modelled_us, clock.outside_us + (real_monotonic_us() - clock.left_at_us)};
}

void program_clock_start_from(const ProgramClockBranch& branch) {
    if (!branch.valid) return;
    ThreadClock& clock = this_thread;
    clock.started = true;
    clock.modelled_us = branch.modelled_us;
    clock.outside_us = branch.outside_us;
    clock.left_at_us = real_monotonic_us();
}

}  // namespace mgpu::sim::rt

extern "C" int clock_gettime(clockid_t id, struct timespec* time) noexcept {
    using namespace mgpu::sim::rt;
    if (time == nullptr || !reads_modelled_time(id) || !program_reads_now()) return real_clock_gettime(id, time);
    double us = program_us(this_thread);
    us += id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE ? origin().realtime_us : origin().monotonic_us;
    to_timespec(us, time);
    return 0;
}

extern "C" int gettimeofday(struct timeval* __restrict tv, void* __restrict tz) noexcept {
    using namespace mgpu::sim::rt;
    struct timespec now {};
    if (tv == nullptr) return 0;
    if (tz != nullptr) std::memset(tz, 0, 2 * sizeof(int));   // struct timezone: no zone, as glibc answers
    clock_gettime(CLOCK_REALTIME, &now);
    tv->tv_sec = now.tv_sec;
    tv->tv_usec = static_cast<suseconds_t>(now.tv_nsec / 1000);
    return 0;
}
