#include "support/device_data.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

#include <cuda_runtime.h>

#include "support/expectations.h"
#include "mgpu/check/harness.h"

namespace suite {

namespace {

std::mt19937_64 generator(std::uint64_t salt) {
    return std::mt19937_64(mgpu::check::run_seed() * 0x9E3779B97F4A7C15ULL + salt);
}

// Inputs of tens of millions of elements: one 64-bit draw per element from SplitMix64 (Steele,
// Lea and Flood, 2014), a few instructions each. Drawing them from std::mt19937_64 through a
// distribution took more of a case's time than the simulated machine did.
class BulkRandom {
public:
    explicit BulkRandom(std::uint64_t salt) : state_(mgpu::check::run_seed() * 0x9E3779B97F4A7C15ULL + salt) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
};

// Setting up inputs is the suite's own work: when it fails, the kit is at fault, not the student.
void require_setup(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string("the checker could not ") + what + ": " + error_text(status));
    }
}

// Reading results back fails only when the student's code broke the device context (a sticky
// error such as 700 from a kernel that reached memory it had no access to).
void require_readable(cudaError_t status) {
    if (status == cudaSuccess) return;
    mgpu::check::fail_and_stop({"the results can be read back after the call",
                                "cudaMemcpy device to host returns " + error_text(cudaSuccess),
                                error_text(status) + ": the device is unusable after the call (a kernel that "
                                                     "faulted leaves such a sticky error)",
                                "", 0});
}

std::string float_text(float value) {
    char text[48];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
    return text;
}

}  // namespace

std::vector<float> random_floats(std::size_t count, std::uint64_t salt) {
    BulkRandom random(salt);
    std::vector<float> values(count);
    // A magnitude in [0.25, 4] from the top 24 bits, a sign from the lowest. The sign is set as a bit,
    // not chosen by a branch: a branch on a random bit is mispredicted every other element, which made
    // this loop most of the CPU time of lesson 2's largest cases.
    for (auto& value : values) {
        const std::uint64_t bits = random.next();
        const float magnitude = 0.25f + 3.75f * static_cast<float>(static_cast<std::int32_t>(bits >> 40)) * 0x1p-24f;
        const std::uint32_t negative = static_cast<std::uint32_t>(~bits & 1) << 31;
        value = std::bit_cast<float>(std::bit_cast<std::uint32_t>(magnitude) | negative);
    }
    return values;
}

std::vector<unsigned char> random_bytes(std::size_t count, std::uint64_t salt) {
    BulkRandom random(salt);
    std::vector<unsigned char> values(count);
    // Never the guard byte, so a byte left as the guard value is always a byte not copied.
    for (auto& value : values) value = static_cast<unsigned char>(1 + random.next() % 0xA4);
    return values;
}

float random_factor(std::uint64_t salt) {
    auto random = generator(salt ^ 0xFAC7);
    return std::uniform_real_distribution<float>(1.5f, 3.5f)(random);
}

DeviceFloats::DeviceFloats(int device, std::size_t count) : device_(device), count_(count) {
    require_setup(cudaSetDevice(device), "select a device");
    require_setup(cudaMalloc(&data_, (count + kGuardElements) * sizeof(float)), "allocate a buffer");
}

DeviceFloats::~DeviceFloats() { cudaFree(data_); }

void DeviceFloats::upload(const std::vector<float>& values) {
    std::vector<float> with_guard(values);
    with_guard.resize(count_ + kGuardElements, kGuardValue);
    require_setup(cudaMemcpy(data_, with_guard.data(), with_guard.size() * sizeof(float), cudaMemcpyHostToDevice),
                  "upload the inputs");
}

void DeviceFloats::fill_with_guard_value() { upload({}); }

std::vector<float> DeviceFloats::download() const {
    std::vector<float> values(count_ + kGuardElements);
    require_readable(cudaSetDevice(device_));
    require_readable(cudaMemcpy(values.data(), data_, values.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return values;
}

DeviceBytes::DeviceBytes(int device, std::size_t count) : device_(device), count_(count) {
    require_setup(cudaSetDevice(device), "select a device");
    require_setup(cudaMalloc(&data_, count + kGuardElements), "allocate a buffer");
}

DeviceBytes::~DeviceBytes() { cudaFree(data_); }

void DeviceBytes::upload(const std::vector<unsigned char>& values) {
    std::vector<unsigned char> with_guard(values);
    with_guard.resize(count_ + kGuardElements, kGuardByte);
    require_setup(cudaMemcpy(data_, with_guard.data(), with_guard.size(), cudaMemcpyHostToDevice), "upload the inputs");
}

std::vector<unsigned char> DeviceBytes::download() const {
    std::vector<unsigned char> values(count_ + kGuardElements);
    require_readable(cudaSetDevice(device_));
    require_readable(cudaMemcpy(values.data(), data_, values.size(), cudaMemcpyDeviceToHost));
    return values;
}

bool expect_scaled(const std::vector<float>& observed, const std::vector<float>& source, float factor,
                   const std::string& what) {
    const std::size_t n = source.size();
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const float expected = factor * source[i];
        // The same single multiplication in float on both sides: equal up to rounding mode.
        if (!(std::fabs(observed[i] - expected) <= 1e-6f * std::fabs(expected))) {
            if (wrong++ == 0) first_wrong = i;
        }
    }
    if (wrong > 0) {
        const float expected = factor * source[first_wrong];
        return expect_value(false, what + ": dst[i] == factor * src[i] for every i < n",
                      "dst[" + std::to_string(first_wrong) + "] = " + float_text(expected) + " (" +
                          float_text(factor) + " * " + float_text(source[first_wrong]) + ")",
                      "dst[" + std::to_string(first_wrong) + "] = " + float_text(observed[first_wrong]) +
                          (observed[first_wrong] == kGuardValue ? " (never written)" : "") + "; " +
                          std::to_string(wrong) + " of " + suite::counted(n, "element") + " wrong");
    }
    for (std::size_t i = n; i < observed.size(); ++i) {
        if (observed[i] != kGuardValue) {
            return expect_value(false, what + ": nothing is written past dst[n - 1]",
                          "dst[" + std::to_string(i) + "] untouched (" + float_text(kGuardValue) + ")",
                          "dst[" + std::to_string(i) + "] = " + float_text(observed[i]));
        }
    }
    return true;
}

bool expect_copied(const std::vector<unsigned char>& observed, const std::vector<unsigned char>& source,
                   const std::string& what) {
    const std::size_t n = source.size();
    std::size_t wrong = 0, first_wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (observed[i] != source[i] && wrong++ == 0) first_wrong = i;
    }
    if (wrong > 0) {
        return expect_value(false, what + ": every byte arrives",
                      "byte " + std::to_string(first_wrong) + " = " + std::to_string(source[first_wrong]),
                      "byte " + std::to_string(first_wrong) + " = " + std::to_string(observed[first_wrong]) +
                          (observed[first_wrong] == kGuardByte ? " (never written)" : "") + "; " +
                          std::to_string(wrong) + " of " + suite::counted(n, "byte") + " wrong");
    }
    for (std::size_t i = n; i < observed.size(); ++i) {
        if (observed[i] != kGuardByte) {
            return expect_value(false, what + ": nothing is written past the last byte",
                          "byte " + std::to_string(i) + " untouched (" + std::to_string(kGuardByte) + ")",
                          "byte " + std::to_string(i) + " = " + std::to_string(observed[i]));
        }
    }
    return true;
}

}  // namespace suite
