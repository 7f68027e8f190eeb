#include "mgpu/races.h"

#include <algorithm>

namespace mgpu::trace {

namespace {

// The first byte range both operations touch where at least one of them writes.
bool conflict(const DeviceOp& a, const DeviceOp& b, Race& race) {
    for (const MemoryRange& x : a.touches)
        for (const MemoryRange& y : b.touches) {
            if (!x.write && !y.write) continue;
            if (x.allocation != y.allocation) continue;
            const std::uintptr_t begin = std::max(x.begin, y.begin);
            const std::uintptr_t end = std::min(x.end, y.end);
            if (begin >= end) continue;
            race.begin = begin;
            race.end = end;
            race.second_writes = y.write;
            return true;
        }
    return false;
}

}  // namespace

std::vector<Race> find_races(const Trace& trace, std::size_t limit) {
    std::vector<const DeviceOp*> ops;
    for (const DeviceOp& op : trace.ops)
        if (!op.touches.empty() && op.end_us > op.start_us) ops.push_back(&op);
    std::sort(ops.begin(), ops.end(), [](const DeviceOp* a, const DeviceOp* b) {
        return a->start_us != b->start_us ? a->start_us < b->start_us : a->id < b->id;
    });
    std::vector<Race> races;
    // A sweep over start times: only operations still running when the next one starts can race with it.
    std::vector<const DeviceOp*> running;
    for (const DeviceOp* op : ops) {
        std::erase_if(running, [&](const DeviceOp* other) { return other->end_us <= op->start_us; });
        for (const DeviceOp* other : running) {
            if (other->stream == op->stream && other->device == op->device) continue;
            Race race{other, op};
            if (conflict(*other, *op, race)) {
                races.push_back(race);
                if (races.size() >= limit) return races;
            }
        }
        running.push_back(op);
    }
    return races;
}

}  // namespace mgpu::trace
