// Data races between the host threads of the code under test, as ThreadSanitizer reports them.
// The judge builds a submission twice where the lesson asks for it (docs/host-races.md): the
// second build instruments the student's file with -fsanitize=thread and runs only the cases of the
// doctest test suite kHostRaceSuite. The suite and the simulator are not instrumented, so every
// race reported is between two accesses made by the student's own code: a write and another access
// to the same memory from two threads that no lock, join or other synchronisation orders.
#pragma once

#include <string>
#include <vector>

namespace mgpu::check {

// TEST_CASE("..." * doctest::test_suite(mgpu::check::kHostRaceSuite)) puts a case in the race build.
inline constexpr const char* kHostRaceSuite = "host races";

struct HostRace {
    std::string file;   // the student's file, as the judge names it ("devices.cu"); "" if no frame is in it
    int line = 0;
    std::string other_file;   // where the other access of the pair is
    int other_line = 0;
    bool write = false;       // the access at file:line writes
    bool other_write = false;
};

// False in a binary built without ThreadSanitizer: a race case then skips itself.
bool race_detector_active();

// The races reported since the process started (each case runs in a process of its own), each pair
// of lines once, in the order they were found.
std::vector<HostRace> host_races();

}  // namespace mgpu::check
