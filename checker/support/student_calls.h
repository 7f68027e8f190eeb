// What one call of the student's code did, read from the simulator's trace: the runtime calls it
// made (with the current device, arguments, result, file and line of each) and the device work
// it queued. The suite makes no runtime calls while the student's code runs, so everything in
// the window is the student's.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mgpu/trace.h"

namespace suite {

class StudentCalls {
public:
    // Runs `code` and records the window of the trace it produced. `what` names the call for the
    // judge, should it crash or hang there ("pipelined_scale(dst on 6, ...)").
    template <class Code>
    auto watch(const std::string& what, Code&& code) {
        begin(what);
        if constexpr (std::is_void_v<decltype(code())>) {
            code();
            end();
        } else {
            auto result = code();
            end();
            return result;
        }
    }

    std::vector<mgpu::trace::ApiCall> calls() const;
    std::vector<mgpu::trace::ApiCall> calls_named(const std::string& name) const;
    std::vector<mgpu::trace::ApiCall> successful(const std::string& name) const;
    // The last call that returned an error, if any (what a left-behind error most likely came from).
    const mgpu::trace::ApiCall* last_failed_call() const;
    // Device work queued in the window; valid after drain (mgpu::sim::drain_all) for timings.
    std::vector<mgpu::trace::DeviceOp> ops() const;
    std::vector<mgpu::trace::DeviceOp> ops_of(mgpu::trace::OpKind kind) const;

    double returned_at_us() const { return returned_at_us_; }

private:
    void begin(const std::string& what);
    void end();

    std::uint64_t after_seq_ = 0;   // calls with a larger seq ...
    std::uint64_t last_seq_ = 0;    // ... up to this one are the student's
    double returned_at_us_ = 0;
    mutable mgpu::trace::ApiCall last_failed_;
};

// For a failed overlap or ordering check: sends what the watched call ran, drawn as a timeline
// page (mgpu/timeline.h), to the judge, which writes it to a file and prints its path under the
// case's findings. `what` names the call ("pipelined_scale (device 3 to 5)").
void attach_timeline(const StudentCalls& calls, const std::string& what);

// "file:line" of a call, "" when the trace does not know it.
std::string where(const mgpu::trace::ApiCall& call);

}  // namespace suite
