// The machine a lesson 1 test case runs on: a simulator preset, and what the environment says about
// its devices (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER), each either unset or set to a value (an empty
// CUDA_VISIBLE_DEVICES hides every device, which is not the same as unset). Every case starts from a
// fresh machine, and random choices come from the run's seed and are named in the scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mgpu/sim/control.h"

namespace lesson1 {

struct Machine {
    Machine(std::string topology_name, std::optional<std::string> visible = std::nullopt,
            std::optional<std::string> order = std::nullopt)
        : topology(std::move(topology_name)), visible_devices(std::move(visible)), device_order(std::move(order)) {}

    std::string topology;                          // a preset (h200, hgx-h200-8, mixed-3, none) or a machine file
    std::optional<std::string> visible_devices;    // CUDA_VISIBLE_DEVICES; nullopt = unset
    std::optional<std::string> device_order;       // CUDA_DEVICE_ORDER; nullopt = unset
    mgpu::sim::Faults faults{};                    // injected on the simulator; real GPUs skip such a case
};

// A machine no preset has: two 80 GB boards of equal memory and different SM counts (114 and 132), at
// the same bus and slot (1B:00) of two PCI domains (0000 and 0001), so that only the SM count tells
// them apart in pick_device and only the domain in find_device. Returns the machine file's path.
std::string two_domain_machine();

// Brings the machine up and names the scenario for the judge. Returns false when the case must not
// run here (the run is restricted to another machine); the case has then been marked skipped.
bool start(const Machine& machine, const std::string& inputs = "");

// Random choices of one case: seeded by the run's seed and the case's own salt, so a case chooses the
// same way whenever the run is repeated with --seed.
std::mt19937_64 random_for(const std::string& salt);

// A CUDA_VISIBLE_DEVICES list of `count` distinct devices of a machine with `devices` devices, in a random
// order ("5,2,7").
std::string random_visible_list(std::mt19937_64& random, int devices, int count);

// The number of devices the runtime shows now (the machine's truth, independent of the code under test).
int device_count();

// Every device's ordinal, for messages: "device 2 (the machine's device 5)".
std::string device_name(int ordinal);

}  // namespace lesson1
