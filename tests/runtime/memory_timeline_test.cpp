// The memory timeline that copies and kernels of one device share: bookings fill free gaps in
// time order, whatever order they are made in.
#include <doctest/doctest.h>

#include "runtime/memory_timeline.h"

using mgpu::sim::rt::MemoryTimeline;

TEST_CASE("memory timeline: work on an idle memory finishes after its own busy time") {
    MemoryTimeline memory;
    CHECK(memory.occupy(10.0, 5.0) == doctest::Approx(15.0));
    CHECK(memory.occupy(100.0, 0.0) == doctest::Approx(100.0));
}

TEST_CASE("memory timeline: two bookings over the same time add up") {
    MemoryTimeline memory;
    CHECK(memory.occupy(0.0, 8.0) == doctest::Approx(8.0));
    // Starts at 2 while the first holds the memory until 8: its 8 us end at 16, not 10.
    CHECK(memory.occupy(2.0, 8.0) == doctest::Approx(16.0));
}

TEST_CASE("memory timeline: a later booking fills a gap before an earlier one, split if it must") {
    MemoryTimeline memory;
    CHECK(memory.occupy(10.0, 5.0) == doctest::Approx(15.0));    // busy 10-15
    CHECK(memory.occupy(0.0, 4.0) == doctest::Approx(4.0));      // fits in 0-10
    // 6 us from 4: 4-10 is free (6 us), so it ends at 10 without waiting for 10-15.
    CHECK(memory.occupy(4.0, 6.0) == doctest::Approx(10.0));
    // 0-15 is busy now: 3 us from 1 run 15-18.
    CHECK(memory.occupy(1.0, 3.0) == doctest::Approx(18.0));
    // Split across a gap: busy 0-18 and 20-30; 4 us from 17 take 18-20 and 30-32.
    CHECK(memory.occupy(20.0, 10.0) == doctest::Approx(30.0));
    CHECK(memory.occupy(17.0, 4.0) == doctest::Approx(32.0));
}
