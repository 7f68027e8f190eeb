// What a process sees of its devices when CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER hold given
// values from its start: the same sequence of calls on both sides.
//
// The CUDA runtime reads both variables once, when a process starts, so on real GPUs the values
// under test cannot be set inside the running conformance program. There the questions go to a
// new process of the same program, started with the values in its environment (fresh_process.h),
// which prints its answers as lines of numbers. The simulator reads the variables at reset_machine, so on it
// the same calls are made in this process.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "conformance_support.h"
#include "fresh_process.h"

namespace conformance {

inline constexpr int kUnwrittenCount = 12345;

struct DeviceSeen {
    std::string name;
    int pci_domain = -1, pci_bus = -1, pci_device = -1;
    int major = -1, minor = -1;
    unsigned long long total_mem = 0;
};

struct DevicesSeen {
    cudaError_t count_status = cudaSuccess;
    int count = kUnwrittenCount;             // as cudaGetDeviceCount left it
    cudaError_t last_error = cudaSuccess;    // cudaGetLastError right after the count
    cudaError_t last_error_again = cudaSuccess;
    cudaError_t peek = cudaSuccess;          // cudaPeekAtLastError after both
    cudaError_t get_device_status = cudaSuccess;
    int current = kUnwrittenCount;           // as cudaGetDevice left it
    cudaError_t set_past_last = cudaSuccess; // cudaSetDevice(count): the first id past the last
    std::vector<DeviceSeen> devices;         // cudaGetDeviceProperties of each counted device
};

namespace detail {

// The calls, in this order, on both sides.
inline DevicesSeen ask_devices() {
    DevicesSeen seen;
    seen.count_status = cudaGetDeviceCount(&seen.count);
    seen.last_error = cudaGetLastError();
    seen.last_error_again = cudaGetLastError();
    seen.peek = cudaPeekAtLastError();
    seen.get_device_status = cudaGetDevice(&seen.current);
    cudaGetLastError();
    if (seen.count_status != cudaSuccess) return seen;
    seen.set_past_last = cudaSetDevice(seen.count);
    cudaGetLastError();
    cudaSetDevice(0);
    for (int d = 0; d < seen.count; ++d) {
        cudaDeviceProp properties{};
        DeviceSeen device;
        if (cudaGetDeviceProperties(&properties, d) == cudaSuccess) {
            device.name = properties.name;
            device.pci_domain = properties.pciDomainID;
            device.pci_bus = properties.pciBusID;
            device.pci_device = properties.pciDeviceID;
            device.major = properties.major;
            device.minor = properties.minor;
            device.total_mem = properties.totalGlobalMem;
        }
        seen.devices.push_back(device);
    }
    return seen;
}

// One number per line, then a line per device; the name last on its line, since it has spaces.
inline std::string write_seen(const DevicesSeen& seen) {
    std::ostringstream out;
    out << static_cast<int>(seen.count_status) << ' ' << seen.count << ' ' << static_cast<int>(seen.last_error) << ' '
        << static_cast<int>(seen.last_error_again) << ' ' << static_cast<int>(seen.peek) << ' '
        << static_cast<int>(seen.get_device_status) << ' ' << seen.current << ' ' << static_cast<int>(seen.set_past_last)
        << ' ' << seen.devices.size() << '\n';
    for (const DeviceSeen& d : seen.devices)
        out << d.pci_domain << ' ' << d.pci_bus << ' ' << d.pci_device << ' ' << d.major << ' ' << d.minor << ' '
            << d.total_mem << ' ' << d.name << '\n';
    return out.str();
}

inline std::optional<DevicesSeen> read_seen(const std::string& text) {
    std::istringstream in(text);
    DevicesSeen seen;
    int codes[6];
    std::size_t devices = 0;
    if (!(in >> codes[0] >> seen.count >> codes[1] >> codes[2] >> codes[3] >> codes[4] >> seen.current >> codes[5] >>
          devices))
        return std::nullopt;
    seen.set_past_last = static_cast<cudaError_t>(codes[5]);
    seen.count_status = static_cast<cudaError_t>(codes[0]);
    seen.last_error = static_cast<cudaError_t>(codes[1]);
    seen.last_error_again = static_cast<cudaError_t>(codes[2]);
    seen.peek = static_cast<cudaError_t>(codes[3]);
    seen.get_device_status = static_cast<cudaError_t>(codes[4]);
    for (std::size_t i = 0; i < devices; ++i) {
        DeviceSeen d;
        if (!(in >> d.pci_domain >> d.pci_bus >> d.pci_device >> d.major >> d.minor >> d.total_mem)) return std::nullopt;
        in >> std::ws;
        std::getline(in, d.name);
        seen.devices.push_back(d);
    }
    return seen;
}

inline constexpr const char* kProbe = "devices-seen";

// The probe's side, in the new process.
inline int answer_probe() {
    const std::string answers = write_seen(ask_devices());
    std::fwrite(answers.data(), 1, answers.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

inline const bool probe_registered = register_probe(kProbe, &answer_probe);

}  // namespace detail

// What a program started on the machine `preset` with CUDA_VISIBLE_DEVICES = `visible` and
// CUDA_DEVICE_ORDER = `order` (nullptr: unset) sees. On real GPUs the case is skipped unless the
// GPUs at hand, with the variables as this program started, answer as `preset` would.
inline DevicesSeen devices_seen(const std::string& preset, const char* visible, const char* order = nullptr) {
    if constexpr (kRealGpu) {
        use_machine(preset);
        const std::string text =
            answer_of_fresh_process(detail::kProbe, {{"CUDA_VISIBLE_DEVICES", visible}, {"CUDA_DEVICE_ORDER", order}});
        const auto seen = detail::read_seen(text);
        REQUIRE_MESSAGE(seen.has_value(), "the new process answered: ", text);
        return *seen;
    } else {
        ScopedEnvironmentVariable visible_devices("CUDA_VISIBLE_DEVICES", visible);
        ScopedEnvironmentVariable device_order("CUDA_DEVICE_ORDER", order);
        use_machine(preset, "eager", {}, true);
        return detail::ask_devices();
    }
}

// For a case that loops over presets: what devices_seen answers, or nothing (and a note that the
// preset was skipped) where the GPUs at hand cannot stand for `preset`.
inline std::optional<DevicesSeen> devices_seen_if_hostable(const std::string& preset, const char* visible,
                                                           const char* order = nullptr) {
    if constexpr (kRealGpu) {
        if (!use_machine_if_hostable(preset)) return std::nullopt;
    }
    return devices_seen(preset, visible, order);
}

}  // namespace conformance
