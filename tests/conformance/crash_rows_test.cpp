// cuda-facts.md rows where the real runtime returns no error code at all but crashes: a second
// cudaStreamDestroy of the same stream. (The table's other crash row, cudaDeviceCanAccessPeer
// with a null answer pointer, returns 1 under CUDA 13.0 on the H200, measured here in a process of
// its own: peer_access_test.cpp checks that.)
// Each call runs in a new process of this program (fresh_process.h); the row holds when that
// process does not come back from the call normally.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <csignal>
#include <cstdio>

#include "conformance_support.h"
#include "fresh_process.h"

namespace {

constexpr int kReturnedNormally = 42;
constexpr int kMachineUnavailable = 43;   // the probe could not bring the machine up (real GPUs only)

// Each probe brings up a fresh h200 machine, makes its call and exits with kReturnedNormally if
// the call came back. It dies as a plain program would, without doctest's crash report; its
// stderr keeps the simulator's explanation, which is what students see.
int run_call(void (*call)()) {
    for (int signal_number : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(signal_number, SIG_DFL);
    const rlimit no_core_file{0, 0};
    setrlimit(RLIMIT_CORE, &no_core_file);
    try {
        conformance::use_machine("h200");
    } catch (const conformance::CaseSkipped& skipped) {
        std::fprintf(stderr, "%s\n", skipped.what());
        return kMachineUnavailable;
    }
    call();
    return kReturnedNormally;
}

int destroy_stream_twice() {
    return run_call([] {
        cudaStream_t stream = nullptr;
        if (cudaStreamCreate(&stream) != cudaSuccess) std::_Exit(kReturnedNormally + 1);
        if (cudaStreamDestroy(stream) != cudaSuccess) std::_Exit(kReturnedNormally + 2);
        (void)cudaStreamDestroy(stream);
    });
}

int can_access_peer_into_variable() {
    return run_call([] {
        int can = -1;
        (void)cudaDeviceCanAccessPeer(&can, 0, 0);
    });
}

const bool probes_registered = conformance::register_probe("destroy-stream-twice", &destroy_stream_twice) &&
                               conformance::register_probe("can-access-peer-into-variable", &can_access_peer_into_variable);

// Runs the probe in a new process; true when it ended without returning from its call (killed by
// a signal, or exited with any status but kReturnedNormally).
bool crashes_in_fresh_process(const char* probe) {
    const conformance::ProbeRun run = conformance::run_in_fresh_process(probe);
    if (run.exited_with(kMachineUnavailable))
        throw conformance::CaseSkipped("the new process cannot bring up the h200 machine (it printed why)");
    return !run.exited_with(kReturnedNormally);
}

}  // namespace

TEST_CASE("a second cudaStreamDestroy of the same stream crashes inside the runtime") {
    CHECK(crashes_in_fresh_process("destroy-stream-twice"));
}

TEST_CASE("the crash check itself: a call that returns normally is not taken for a crash") {
    CHECK_FALSE(crashes_in_fresh_process("can-access-peer-into-variable"));
}
