// What the conformance tests share: bringing up a preset machine, seeded random
// inputs, bandwidth arithmetic and lookups in the recorded trace.
//
// Expected values in these tests come from reference/cuda-facts.md, from NVIDIA's
// documentation or from an independent host computation, never from the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "mgpu/sim/control.h"
#include "mgpu/trace.h"

namespace conformance {

// Every preset the kit ships; tests that hold for any machine run on all of them.
inline const std::vector<std::string> kGpuPresets = {"h200", "hgx-h200-8", "islands-2x2", "pcie-4", "mixed-3"};

// Brings up a fresh machine. CUDA_VISIBLE_DEVICES is ignored unless a test asks for it,
// so that a variable left in the caller's environment cannot change the expected answers.
inline void use_machine(const std::string& topology, const std::string& schedule = "eager",
                        const mgpu::sim::Faults& faults = {}, bool apply_visible_devices = false) {
    mgpu::sim::Options options;
    options.topology = topology;
    options.schedule = mgpu::sim::parse_schedule(schedule);
    options.faults = faults;
    options.apply_cuda_visible_devices = apply_visible_devices;
    mgpu::sim::reset_machine(options);
}

// Values in [0.5, 1.5): never zero, so a buffer that was never written cannot pass for a result.
inline std::vector<float> random_floats(std::size_t count, std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> distribution(0.5f, 1.5f);
    std::vector<float> values(count);
    for (float& v : values) v = distribution(generator);
    return values;
}

// Bytes per second in GB/s (10^9) for `bytes` moved in `milliseconds`.
inline double gigabytes_per_second(double bytes, double milliseconds) {
    return bytes / (milliseconds * 1e-3) / 1e9;
}

inline bool within_fraction(double observed, double expected, double fraction) {
    return observed >= expected * (1.0 - fraction) && observed <= expected * (1.0 + fraction);
}

// The recorded device operations of one kind, in the order they were enqueued.
inline std::vector<mgpu::trace::DeviceOp> ops_of_kind(mgpu::trace::OpKind kind) {
    std::vector<mgpu::trace::DeviceOp> found;
    for (const auto& op : mgpu::sim::trace().ops)
        if (op.kind == kind) found.push_back(op);
    return found;
}

// The last recorded operation of a kind (std::nullopt if there is none).
inline std::optional<mgpu::trace::DeviceOp> last_op_of_kind(mgpu::trace::OpKind kind) {
    auto found = ops_of_kind(kind);
    if (found.empty()) return std::nullopt;
    return found.back();
}

// Sets an environment variable for one scope and puts the old value back afterwards.
class ScopedEnvironmentVariable {
public:
    ScopedEnvironmentVariable(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) previous_ = std::string(old);
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~ScopedEnvironmentVariable() {
        if (previous_) ::setenv(name_.c_str(), previous_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    ScopedEnvironmentVariable(const ScopedEnvironmentVariable&) = delete;
    ScopedEnvironmentVariable& operator=(const ScopedEnvironmentVariable&) = delete;

private:
    std::string name_;
    std::optional<std::string> previous_;
};

}  // namespace conformance
