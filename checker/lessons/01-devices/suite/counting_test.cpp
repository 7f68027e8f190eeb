// Criterion "counting" (lesson section 1.2): the count of usable devices, 0 when the runtime says there
// is none, and no error left behind either way.
#include <doctest/doctest.h>

#include <string>

#include "devices.h"
#include "support/expectations.h"
#include "scenario.h"
#include "support/student_calls.h"

namespace {

using suite::StudentCalls;

// count_devices() against the machine's own count; on a machine with nothing usable that is 0. There
// the runtime keeps answering its 35, 100 or 101 to every call, cudaGetLastError included (measured on an
// H200), so no error can be cleared and only the count is judged.
void expect_count(const std::string& why_zero = "") {
    StudentCalls calls;
    const int counted = calls.watch("count_devices()", [] { return count_devices(); });
    const int truth = lesson1::device_count();
    std::string observed = std::to_string(counted);
    if (counted == -1 && calls.calls().empty()) observed += " without any CUDA call: is this still the skeleton's TODO(1)?";
    else if (counted != truth && !why_zero.empty()) observed += " (" + why_zero + ")";
    suite::expect(counted == truth, "count_devices() returns the number of usable devices", std::to_string(truth),
                    observed);
    if (truth > 0) suite::expect_no_error_left(calls, "count_devices()");
}

}  // namespace

TEST_CASE("counting: with no driver count_devices gives 0 (cudaGetDeviceCount answers 35)") {
    if (!lesson1::start({"none"})) return;
    expect_count("cudaGetDeviceCount returned cudaErrorInsufficientDriver (35) and left its count unwritten");
}

TEST_CASE("counting: with CUDA_VISIBLE_DEVICES empty count_devices gives 0 (cudaGetDeviceCount answers 100)") {
    if (!lesson1::start({"hgx-h200-8", std::string("")})) return;
    expect_count("cudaGetDeviceCount returned cudaErrorNoDevice (100) and left its count unwritten");
}

TEST_CASE("counting: when the first CUDA_VISIBLE_DEVICES entry names no device count_devices gives 0") {
    if (!lesson1::start({"h200", std::string("1,0")})) return;
    expect_count("cudaGetDeviceCount returned cudaErrorNoDevice (100): parsing stops at the first invalid entry");
}

TEST_CASE("counting: with a device listed twice in CUDA_VISIBLE_DEVICES count_devices gives 0 (101)") {
    if (!lesson1::start({"hgx-h200-8", std::string("3,3")})) return;
    expect_count("cudaGetDeviceCount returned cudaErrorInvalidDevice (101): duplicates are refused, not merged");
}

TEST_CASE("counting: count_devices on one GPU, on hgx-h200-8 and on mixed-3") {
    for (const char* topology : {"h200", "hgx-h200-8", "mixed-3"}) {
        if (!lesson1::start({topology})) continue;
        expect_count();
    }
}

TEST_CASE("counting: count_devices under a random CUDA_VISIBLE_DEVICES on hgx-h200-8") {
    auto random = lesson1::random_for("counting");
    const int shown = 1 + static_cast<int>(random() % 8);
    const std::string list = lesson1::random_visible_list(random, 8, shown);
    if (!lesson1::start({"hgx-h200-8", list})) return;
    expect_count();
}
