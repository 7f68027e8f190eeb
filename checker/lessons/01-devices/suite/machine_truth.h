// What the lesson 1 functions should answer on the machine at hand, computed from the simulator's
// description of the machine: never from the code under test, never through the runtime calls the
// student makes (so the checker creates no context and leaves no error of its own).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "devices.h"

namespace lesson1 {

// One record per visible device, as list_devices must give it.
std::vector<DeviceInfo> expected_devices();

// nvidia-smi's spelling of a CUDA bus id: 8-digit domain ("00000000:1B:00.0"), here also lowercased.
std::string nvidia_smi_spelling(const std::string& cuda_bus_id);

// The device pick_device must choose (the header's rule), or -1.
int expected_pick(const Requirements& needs);

// "cc >= 8.9 and 40 GiB".
std::string describe(const Requirements& needs);

// Which fields of two records differ ("name, pci_bus_id"); "" when none.
std::string differing_fields(const DeviceInfo& expected, const DeviceInfo& observed);

}  // namespace lesson1
