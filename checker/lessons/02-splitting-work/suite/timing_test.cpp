// Criterion "timing" (lesson section 2.8): device_ms[d] is the time device d spent on its share,
// from events on its own stream. The reference is the same share's span on the modelled timeline
// (its first copy's start to its last copy's end), so the check compares the simulator with itself
// and holds whatever the cost model's figures are.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/expectations.h"
#include "host_data.h"
#include "support/scenario.h"
#include "split_work.h"

namespace {

using namespace lesson2;

void expect_device_times(const Run& result) {
    if (!suite::expect(result.device_ms.size() == result.plan.size(), "device_ms has one entry per share",
                         suite::counted(result.plan.size(), "entry", "entries"), suite::counted(result.device_ms.size(), "entry", "entries")))
        return;
    for (std::size_t d = 0; d < result.plan.size(); ++d) {
        const float ms = result.device_ms[d];
        const std::string entry = "device_ms[" + std::to_string(d) + "]";
        if (result.plan[d].count == 0) {
            suite::expect(ms == 0.0f, entry + " is 0: share " + std::to_string(d) + " is empty", "0", std::to_string(ms));
            continue;
        }
        const ShareWork& work = result.shares[d];
        if (work.ops.empty() || work.copy_in == nullptr) continue;   // device discipline reports it
        // At least the share's own copies and kernel; at most from when its input copy was queued (it
        // may wait for the device's copy engine) to the end of its output copy. Events sit a host call
        // away from the copies they bracket: a few microseconds either way.
        const double span_us = work.end_us() - work.start_us();
        const double queued_us = work.end_us() - std::min(work.start_us(), work.copy_in->begin_us);
        const double measured_us = static_cast<double>(ms) * 1000.0;
        // A share that takes little more than a host call only has to show a time.
        const bool close = span_us < 50.0 ? measured_us > 0
                                           : measured_us >= 0.9 * span_us - 5.0 && measured_us <= 1.1 * queued_us + 5.0;
        if (!suite::expect(close,
                             entry + " is the time device " + std::to_string(d) +
                                 " spent on its share, from its input copy to the end of its output copy",
                             std::to_string(span_us / 1000.0) + " ms (the modelled timeline)",
                             std::to_string(ms) + " ms: record one event on the device's stream before the input copy and "
                                                  "one after the output copy, then cudaEventElapsedTime after the stream's "
                                                  "synchronisation",
                             work.copy_in))
            return;
    }
}

}  // namespace

// The largest share is device 1's and the last device's is a middle one: waiting for the device
// queued last is not waiting for the slowest. The shares are large enough (device 1's copies take
// about half a millisecond each) that queueing the later devices does not hide the difference.
TEST_CASE("timing: device_ms on hgx-h200-8 with a plan that gives each device a different share") {
    if (!suite::start({"hgx-h200-8"}, "plan of 33554447 floats weighted 3, 8, 5, 1, 7, 2, 6, 4")) return;
    Run result;
    run(result, Driver::OneThread, weighted_plan((std::size_t{1} << 25) + 15, {3, 8, 5, 1, 7, 2, 6, 4}), 401, 3, true);
    expect_device_times(result);
}

TEST_CASE("timing: device_ms on mixed-3, where the same share takes each device a different time") {
    if (!suite::start({"mixed-3", "lazy"}, "even plan of 3000007 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan(3000007, 3), 402, 0, true);
    expect_device_times(result);
}

TEST_CASE("timing: device_ms is 0 for empty shares") {
    if (!suite::start({"islands-2x2", "shuffle:7"}, "2 floats over 4 devices, then 1048576 floats on device 0 alone")) return;
    Run empty_shares;
    run(empty_shares, Driver::OneThread, even_plan(2, 4), 403, 0, true);
    expect_device_times(empty_shares);
    Run one;
    run(one, Driver::OneThread, even_plan(std::size_t{1} << 20, 1), 404, 1, true);
    expect_device_times(one);
}

TEST_CASE("timing: device_ms handed in again holds this call's times only, whatever it held before") {
    if (!suite::start({"islands-2x2"}, "one vector for 4 shares of 262144 floats, then 2 floats over 4 devices, "
                                         "then one share of 65536 floats")) return;
    Run first;
    run(first, Driver::OneThread, even_plan(std::size_t{1} << 20, 4), 406, 0, true);
    expect_device_times(first);
    Run with_empty_shares;
    with_empty_shares.device_ms = first.device_ms;   // the caller's vector, reused
    run(with_empty_shares, Driver::OneThread, even_plan(2, 4), 407, 0, true);
    expect_device_times(with_empty_shares);
    Run shorter;
    shorter.device_ms = first.device_ms;
    run(shorter, Driver::OneThread, even_plan(std::size_t{1} << 16, 1), 408, 0, true);
    expect_device_times(shorter);
}

TEST_CASE("timing: device_ms on one GPU") {
    if (!suite::start({"h200"}, "one share of 2097155 floats")) return;
    Run result;
    run(result, Driver::OneThread, even_plan((std::size_t{1} << 21) + 3, 1), 405, 0, true);
    expect_device_times(result);
}
