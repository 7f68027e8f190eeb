// Criterion "results" (lesson section 2.4): every element of every share comes back as
// factor * in, whoever drives the devices, on every machine and schedule. Lazy and shuffled
// schedules turn a device that was not waited for into wrong results; the plans are the suite's own.
#include <doctest/doctest.h>

#include <string>

#include "support/expectations.h"
#include "support/host_race_checks.h"
#include "host_data.h"
#include "mgpu/check/host_races.h"
#include "mgpu/sim/control.h"
#include "support/scenario.h"
#include "split_work.h"

namespace {

using namespace lesson2;

void check(Driver driver, const std::vector<Share>& plan, std::uint64_t salt, int caller = 0) {
    Run result;
    run(result, driver, plan, salt, caller);
    expect_results(result);
}

}  // namespace

TEST_CASE("results: scale_on_devices over the eight GPUs of hgx-h200-8, 2^22 + 3 elements") {
    if (!suite::start({"hgx-h200-8"}, "even plan of 4194307 floats")) return;
    check(Driver::OneThread, even_plan((std::size_t{1} << 22) + 3, 8), 101, 3);
}

TEST_CASE("results: scale_on_devices on pcie-4 under a lazy schedule, a prime number of elements") {
    if (!suite::start({"pcie-4", "lazy"}, "even plan of 1000003 floats")) return;
    check(Driver::OneThread, even_plan(1000003, 4), 102);
}

TEST_CASE("results: scale_on_devices on mixed-3 under a shuffled schedule, shares weighted by memory bandwidth") {
    if (!suite::start({"mixed-3", "shuffle:5"}, "plan of 777777 floats weighted by memory bandwidth")) return;
    check(Driver::OneThread, weighted_plan(777777, bandwidth_weights()), 103, 1);
}

TEST_CASE("results: scale_on_devices with fewer elements than devices (empty shares) under a shuffled schedule") {
    if (!suite::start({"islands-2x2", "shuffle:11"}, "3 floats over 4 devices, then 1 float")) return;
    check(Driver::OneThread, even_plan(3, 4), 104);
    check(Driver::OneThread, even_plan(1, 4), 105, 2);
}

TEST_CASE("results: scale_on_devices on one GPU with 0, 1 and 65537 elements") {
    if (!suite::start({"h200"}, "plans of one share")) return;
    check(Driver::OneThread, even_plan(0, 1), 106);
    check(Driver::OneThread, even_plan(1, 1), 107);
    check(Driver::OneThread, even_plan(65537, 1), 108);
}

TEST_CASE("results: scale_on_devices over 2 of 8 devices, and an empty plan") {
    if (!suite::start({"hgx-h200-8", "lazy"}, "100001 floats on devices 0 and 1")) return;
    check(Driver::OneThread, even_plan(100001, 2), 109, 7);
    check(Driver::OneThread, {}, 110);
}

TEST_CASE("results: scale_on_devices of 2^23 + 1 elements over hgx-h200-8 under a shuffled schedule") {
    if (!suite::start({"hgx-h200-8", "shuffle:3"}, "even plan of 8388609 floats")) return;
    check(Driver::OneThread, even_plan((std::size_t{1} << 23) + 1, 8), 111, 4);
}

TEST_CASE("results: a plan with more shares than devices is refused with cudaErrorInvalidValue") {
    if (!suite::start({"pcie-4"}, "5 shares on 4 devices")) return;
    for (Driver driver : {Driver::OneThread, Driver::Threads}) {
        const std::vector<Share> plan = even_plan(50, 5);
        std::vector<float> in(50, 1.0f), out(50, 0.0f);
        suite::StudentCalls calls;
        const std::string what = driver == Driver::Threads ? "scale_with_threads with 5 shares on 4 devices"
                                                           : "scale_on_devices with 5 shares on 4 devices";
        const cudaError_t status = calls.watch(what, [&] {
            return driver == Driver::Threads ? scale_with_threads(out.data(), in.data(), 2.0f, plan)
                                             : scale_on_devices(out.data(), in.data(), 2.0f, plan, nullptr);
        });
        suite::expect_status(status, cudaErrorInvalidValue, what, calls);
    }
}

TEST_CASE("results: scale_with_threads over hgx-h200-8 under a shuffled schedule") {
    if (!suite::start({"hgx-h200-8", "shuffle:23"}, "even plan of 1048583 floats")) return;
    check(Driver::Threads, even_plan(1048583, 8), 112, 6);
}

TEST_CASE("results: scale_with_threads on pcie-4 under a lazy schedule, with empty shares") {
    if (!suite::start({"pcie-4", "lazy"}, "2 floats over 4 devices, then 99991")) return;
    check(Driver::Threads, even_plan(2, 4), 113);
    check(Driver::Threads, even_plan(99991, 4), 114, 3);
}

TEST_CASE("results: scale_with_threads on mixed-3 with a weighted plan") {
    if (!suite::start({"mixed-3", "shuffle:9"}, "plan of 300007 floats weighted by memory bandwidth")) return;
    check(Driver::Threads, weighted_plan(300007, bandwidth_weights()), 115, 2);
}

TEST_CASE("results: scale_with_threads on one GPU with 1 and 4099 elements") {
    if (!suite::start({"h200"}, "plans of one share")) return;
    check(Driver::Threads, even_plan(1, 1), 116);
    check(Driver::Threads, even_plan(4099, 1), 117);
}

// The threads run at the same time (header, task 5): a status or a result they share needs a lock or
// a slot of each thread's own. ThreadSanitizer, in the judge's race build, reports two accesses that
// nothing orders whichever ran first, so this case finds such a race on every run
// (docs/host-races.md). Small shares: the race is in the host code, not in the data.
TEST_CASE("results: scale_with_threads's threads on hgx-h200-8 share nothing without a lock (race detector)" *
          doctest::test_suite(mgpu::check::kHostRaceSuite)) {
    if (suite::skip_without_race_detector()) return;
    if (!suite::start({"hgx-h200-8"}, "even plan of 8195 floats")) return;
    Run result;
    run_any_status(result, Driver::Threads, even_plan(8195, 8), 118, 1);
    // The race first: a status or an element it spoiled only repeats it.
    if (!suite::expect_no_host_races("scale_with_threads", "2.7")) return;
    suite::require_status(result.status, cudaSuccess, result.text(), result.calls);
    expect_results(result);
}

TEST_CASE("results: scale_with_threads returns the error a thread met") {
    if (!suite::start({"pcie-4"}, "even plan of 40000 floats; the second cudaMalloc fails")) return;
    if (!inject_malloc_failure(2)) return;
    const std::vector<Share> plan = even_plan(40000, 4);
    std::vector<float> in(40000, 1.0f), out(40000, 0.0f);
    suite::StudentCalls calls;
    const std::string what = "scale_with_threads when one thread's cudaMalloc fails";
    const cudaError_t status = calls.watch(what, [&] { return scale_with_threads(out.data(), in.data(), 2.0f, plan); });
    suite::expect_status(status, cudaErrorMemoryAllocation, what, calls);
}
