// Inputs and results on the simulated devices. Inputs are random for every run (seeded by the
// judge, so a failure can be repeated) and never zero, so a copy that did not happen or a kernel
// that did not scale cannot pass by accident. Every output buffer has a guard zone after its
// end, filled with a marker value, to catch writes past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/student_calls.h"

namespace suite {

inline constexpr std::size_t kGuardElements = 64;
inline constexpr float kGuardValue = -4242.125f;

// Random floats in ±[0.25, 4), never 0. `salt` tells apart the inputs of one case.
std::vector<float> random_floats(std::size_t count, std::uint64_t salt);
std::vector<unsigned char> random_bytes(std::size_t count, std::uint64_t salt);
float random_factor(std::uint64_t salt);   // in [1.5, 3.5): never 1, so scaling is visible

// A cudaMalloc'ed buffer of `count` elements plus the guard zone, freed when it goes out of scope.
// Allocation is the suite's, before and after the student's call, so leak checks compare around it.
class DeviceFloats {
public:
    DeviceFloats(int device, std::size_t count);
    ~DeviceFloats();
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;

    float* data() const { return data_; }
    int device() const { return device_; }
    std::size_t count() const { return count_; }

    void upload(const std::vector<float>& values);   // fills [0, count) and the guard zone with kGuardValue
    void fill_with_guard_value();                    // everything, guard zone included
    std::vector<float> download() const;             // count + guard elements

private:
    int device_;
    std::size_t count_;
    float* data_ = nullptr;
};

// The same for bytes (copy_between_devices).
class DeviceBytes {
public:
    DeviceBytes(int device, std::size_t count);
    ~DeviceBytes();
    DeviceBytes(const DeviceBytes&) = delete;
    DeviceBytes& operator=(const DeviceBytes&) = delete;

    unsigned char* data() const { return data_; }
    void upload(const std::vector<unsigned char>& values);   // guard zone gets 0xA5
    std::vector<unsigned char> download() const;

private:
    int device_;
    std::size_t count_;
    unsigned char* data_ = nullptr;
};

inline constexpr unsigned char kGuardByte = 0xA5;

// Checks observed[i] == factor * source[i] for i < n and the guard zone after n untouched.
// `what` names the call ("scale_from_peer(dst on 1, src on 0, n = 1000003)").
bool expect_scaled(const std::vector<float>& observed, const std::vector<float>& source, float factor,
                   const std::string& what);

// Checks observed bytes equal `source` and the guard zone after them is untouched.
bool expect_copied(const std::vector<unsigned char>& observed, const std::vector<unsigned char>& source,
                   const std::string& what);

}  // namespace suite
