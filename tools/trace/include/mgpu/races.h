// Data races between device operations, found in a trace: two operations that ran at the same
// time on the modelled (or measured) timeline, on different streams, touching the same bytes, at
// least one of them writing. Nothing ordered them (an ordered pair never overlaps in time), so on
// a real GPU the reader sees old bytes, new bytes or a mix.
#pragma once

#include <cstddef>
#include <vector>

#include "mgpu/trace.h"

namespace mgpu::trace {

struct Race {
    const DeviceOp* first = nullptr;    // the one that started first
    const DeviceOp* second = nullptr;
    std::uintptr_t begin = 0;           // the first shared byte range found
    std::uintptr_t end = 0;
    bool second_writes = false;         // second wrote the shared bytes (otherwise first did)
};

// At most `limit` races, earliest first; operations with no recorded memory ranges are ignored.
std::vector<Race> find_races(const Trace& trace, std::size_t limit = 16);

}  // namespace mgpu::trace
