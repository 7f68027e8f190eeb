// cuda-facts.md rows where the real runtime returns no error code at all but crashes:
// cudaDeviceCanAccessPeer(nullptr, 0, 0), and a second cudaStreamDestroy of the same stream.
// Each call runs in a child process; the row holds when the child does not come back from the
// call normally.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <functional>

#include "conformance_support.h"

namespace {

constexpr int kReturnedNormally = 42;
constexpr int kMachineUnavailable = 43;   // the child could not bring the machine up (real GPUs only)

// Runs `call` in a child process on a fresh machine; returns true when the child ended without
// returning from the call (killed by a signal, or exited with any status but kReturnedNormally).
bool crashes_in_child(const std::function<void()>& call) {
    std::fflush(nullptr);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // The child dies as a plain program would, without doctest's crash report; its stderr
        // keeps the simulator's explanation, which is what students see.
        for (int signal_number : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(signal_number, SIG_DFL);
        const rlimit no_core_file{0, 0};
        setrlimit(RLIMIT_CORE, &no_core_file);
        try {
            conformance::use_machine("h200");
        } catch (const conformance::CaseSkipped& skipped) {
            std::fprintf(stderr, "%s\n", skipped.what());
            _exit(kMachineUnavailable);
        }
        call();
        _exit(kReturnedNormally);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kMachineUnavailable)
        throw conformance::CaseSkipped("the child process cannot bring up the h200 machine (it printed why)");
    return !(WIFEXITED(status) && WEXITSTATUS(status) == kReturnedNormally);
}

}  // namespace

TEST_CASE("cudaDeviceCanAccessPeer(nullptr, 0, 0) crashes inside the runtime (no error code)") {
    CHECK(crashes_in_child([] { (void)cudaDeviceCanAccessPeer(nullptr, 0, 0); }));
}

TEST_CASE("a second cudaStreamDestroy of the same stream crashes inside the runtime") {
    CHECK(crashes_in_child([] {
        cudaStream_t stream = nullptr;
        if (cudaStreamCreate(&stream) != cudaSuccess) _exit(kReturnedNormally + 1);
        if (cudaStreamDestroy(stream) != cudaSuccess) _exit(kReturnedNormally + 2);
        (void)cudaStreamDestroy(stream);
    }));
}

TEST_CASE("the crash check itself: a call that returns normally is not taken for a crash") {
    CHECK_FALSE(crashes_in_child([] {
        int can = -1;
        (void)cudaDeviceCanAccessPeer(&can, 0, 0);
    }));
}
