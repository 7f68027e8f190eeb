// Criterion "device scope" (lesson section 1.10): DeviceScope makes a device current and gives the
// caller's current device back on every way out, and an invalid device changes nothing.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <thread>

#include "devices.h"
#include "support/expectations.h"
#include "scenario.h"
#include "support/student_calls.h"

namespace {

using suite::StudentCalls;

int current_device() {
    int device = -1;
    cudaGetDevice(&device);
    return device;
}

}  // namespace

TEST_CASE("device scope: DeviceScope makes the device current and gives the caller's back, also nested") {
    if (!lesson1::start({"hgx-h200-8"})) return;
    auto random = lesson1::random_for("scope");
    const int caller = 1 + static_cast<int>(random() % 7);   // never 0: a scope that "restores" 0 must show
    const int outer = (caller + 1 + static_cast<int>(random() % 6)) % 8, inner = (outer + 3) % 8;
    cudaSetDevice(caller);
    StudentCalls calls;
    calls.watch("DeviceScope(" + std::to_string(outer) + ")", [&] {
        DeviceScope scope(outer);
        suite::expect(scope.status() == cudaSuccess, "DeviceScope(" + std::to_string(outer) + ").status()",
                        "cudaSuccess", suite::error_text(scope.status()));
        suite::expect(current_device() == outer, "inside DeviceScope(" + std::to_string(outer) + ") device " +
                                                       std::to_string(outer) + " is current",
                        "device " + std::to_string(outer), "device " + std::to_string(current_device()));
        {
            DeviceScope nested(inner);
            suite::expect(current_device() == inner, "inside a nested DeviceScope(" + std::to_string(inner) + ")",
                            "device " + std::to_string(inner), "device " + std::to_string(current_device()));
        }
        suite::expect(current_device() == outer, "after the nested scope ends, the outer scope's device is current",
                        "device " + std::to_string(outer), "device " + std::to_string(current_device()));
    });
    suite::expect_current_device(caller, "DeviceScope ends");
}

TEST_CASE("device scope: DeviceScope gives the caller's device back when an exception leaves the scope") {
    if (!lesson1::start({"hgx-h200-8"})) return;
    cudaSetDevice(5);
    StudentCalls calls;
    int inside = -1;
    calls.watch("DeviceScope(2) left by an exception", [&] {
        try {
            DeviceScope scope(2);
            inside = current_device();
            throw std::runtime_error("work failed");
        } catch (const std::runtime_error&) {
        }
    });
    suite::expect(inside == 2, "inside DeviceScope(2) device 2 is current", "device 2", "device " + std::to_string(inside));
    suite::expect_current_device(5, "an exception leaves a DeviceScope");
}

TEST_CASE("device scope: DeviceScope of a device that does not exist reports 101, changes nothing and leaves no error") {
    if (!lesson1::start({"mixed-3"})) return;
    cudaSetDevice(2);
    StudentCalls calls;
    for (int invalid : {3, -1}) {
        cudaError_t status = cudaSuccess;
        int inside = -1;
        calls.watch("DeviceScope(" + std::to_string(invalid) + ")", [&] {
            DeviceScope scope(invalid);
            status = scope.status();
            cudaGetDevice(&inside);
        });
        suite::expect(status == cudaErrorInvalidDevice, "DeviceScope(" + std::to_string(invalid) + ").status()",
                        suite::error_text(cudaErrorInvalidDevice), suite::error_text(status));
        suite::expect(inside == 2, "inside DeviceScope(" + std::to_string(invalid) + ") the caller's device stays current",
                        "device 2", "device " + std::to_string(inside));
        suite::expect_current_device(2, "DeviceScope(" + std::to_string(invalid) + ") ends");
        // Task 5: status() reports the error, so the scope handled it and leaves none behind.
        if (!suite::expect_no_error_left(calls, "DeviceScope(" + std::to_string(invalid) + ")")) break;
    }
}

TEST_CASE("device scope: on a new host thread DeviceScope gives back device 0, where that thread started") {
    if (!lesson1::start({"hgx-h200-8"})) return;
    cudaSetDevice(4);   // the main thread's choice does not carry over to a new thread
    int inside = -1, after = -1;
    std::thread worker([&] {
        {
            DeviceScope scope(6);
            inside = current_device();
        }
        after = current_device();
    });
    worker.join();
    suite::expect(inside == 6, "inside DeviceScope(6) on a new thread device 6 is current", "device 6",
                    "device " + std::to_string(inside));
    suite::expect(after == 0, "a new host thread has device 0 current again after its DeviceScope(6) ends",
                    "device 0", "device " + std::to_string(after));
    suite::expect_current_device(4, "another thread's DeviceScope");
}
