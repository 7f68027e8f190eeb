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
#include <doctest/doctest.h>

#include "conformance_skip.h"
#include "mgpu/sim/control.h"
#include "mgpu/trace.h"

namespace conformance {

// Built against the real CUDA runtime (conformance-real-*) rather than the simulator. On a real GPU
// the first call of each kind in a process pays one-time costs (the tracer's callbacks, the
// driver's first use of a path) that the documented behaviour under test is not about, and a single
// timing varies from run to run; cases warm up and repeat there. The simulator has neither, so on it
// every case runs exactly as written.
#if defined(MGPU_CONFORMANCE_REAL_GPU)
inline constexpr bool kRealGpu = true;
#else
inline constexpr bool kRealGpu = false;
#endif

// Every preset the kit ships; tests that hold for any machine run on all of them.
inline const std::vector<std::string> kGpuPresets = {"h200", "hgx-h200-8", "islands-2x2", "pcie-4", "mixed-3"};

namespace detail {

#if defined(MGPU_CONFORMANCE_REAL_GPU)
// The CUDA runtime reads CUDA_VISIBLE_DEVICES once, when the process starts.
inline const std::optional<std::string> visible_devices_at_start = [] {
    const char* value = std::getenv("CUDA_VISIBLE_DEVICES");
    return value ? std::optional<std::string>(value) : std::nullopt;
}();
#endif

// Brings the machine up; returns why it cannot be brought up on the machine at hand, if so.
// The simulator hosts every scenario. Real GPUs host a scenario only when they answer as its
// preset would: the same number of devices (a preset's device count and its invalid device ids
// are part of what the tests check) and the same peer pairs; a changed CUDA_VISIBLE_DEVICES
// cannot take effect inside a running process.
inline std::optional<std::string> bring_up_machine(const std::string& topology, const std::string& schedule,
                                                   const mgpu::sim::Faults& faults, bool apply_visible_devices) {
    mgpu::sim::Options options;
    options.topology = topology;
    options.schedule = mgpu::sim::parse_schedule(schedule);
    options.faults = faults;
    options.apply_cuda_visible_devices = apply_visible_devices;
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    if (apply_visible_devices) {
        const char* now = std::getenv("CUDA_VISIBLE_DEVICES");
        const std::optional<std::string> current = now ? std::optional<std::string>(now) : std::nullopt;
        if (current != visible_devices_at_start)
            return "the case changes CUDA_VISIBLE_DEVICES inside the process; the CUDA runtime reads it only once, "
                   "when the process starts";
    }
#endif
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    // Only a real machine can refuse a scenario; on the simulator every case runs.
    try {
        mgpu::sim::reset_machine(options);
    } catch (const mgpu::sim::ScenarioUnavailable& unavailable) {
        return std::string(unavailable.what());
    }
#else
    mgpu::sim::reset_machine(options);
#endif
#if defined(MGPU_CONFORMANCE_REAL_GPU)
    mgpu::sim::MachineSpec wanted = mgpu::sim::load_machine(topology);
    if (apply_visible_devices) wanted = mgpu::sim::apply_visible_devices(wanted, std::getenv("CUDA_VISIBLE_DEVICES"));
    const std::size_t shown = mgpu::sim::machine().devices.size();
    if (shown != wanted.devices.size())
        return "the " + topology + " machine has " + std::to_string(wanted.devices.size()) +
               " GPU(s) and this machine shows " + std::to_string(shown) +
               " (CUDA_VISIBLE_DEVICES set before the program starts can show fewer)";
#endif
    return std::nullopt;
}

}  // namespace detail

// Brings up a fresh machine. CUDA_VISIBLE_DEVICES is ignored unless a test asks for it,
// so that a variable left in the caller's environment cannot change the expected answers.
// Where the machine at hand cannot host the scenario (real GPUs only), the test case ends
// as skipped, with the reason.
inline void use_machine(const std::string& topology, const std::string& schedule = "eager",
                        const mgpu::sim::Faults& faults = {}, bool apply_visible_devices = false) {
    if (auto reason = detail::bring_up_machine(topology, schedule, faults, apply_visible_devices))
        throw CaseSkipped(*reason);
}

// For a test case that checks several presets in a loop: brings the machine up and returns
// true, or notes why this preset is skipped and returns false, so that the loop goes on with
// the presets the machine at hand can host.
inline bool use_machine_if_hostable(const std::string& topology, const std::string& schedule = "eager",
                                    const mgpu::sim::Faults& faults = {}, bool apply_visible_devices = false) {
    auto reason = detail::bring_up_machine(topology, schedule, faults, apply_visible_devices);
    if (!reason) return true;
    const std::string note = std::string(kSkipMarker) + "preset " + topology + ": " + *reason;
    MESSAGE(note);
    return false;
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
