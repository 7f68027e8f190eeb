// topo's table of a machine (machine_table.cpp) is in English exactly the simulator's
// describe_machine, which validate's reports keep: for every preset, narrowed or not.
#include <doctest/doctest.h>

#include "machine_table.h"

TEST_CASE("topo's machine table in English is describe_machine's, for every preset") {
    for (const std::string& name : mgpu::sim::preset_names()) {
        CAPTURE(name);
        const mgpu::sim::MachineSpec machine = mgpu::sim::load_machine(name);
        CHECK(mgpu::cli::machine_table(machine) == mgpu::sim::describe_machine(machine));
        for (const char* visible : {"", "0", "1,0", "3,1"}) {
            CAPTURE(visible);
            const mgpu::sim::MachineSpec narrowed = mgpu::sim::apply_visible_devices(machine, visible);
            CHECK(mgpu::cli::machine_table(narrowed) == mgpu::sim::describe_machine(narrowed));
        }
    }
    const mgpu::sim::MachineSpec from_file = mgpu::sim::load_machine(MGPU_TEST_SOURCE_ROOT "/tools/sim/topologies/example-2gpu.json");
    CHECK(mgpu::cli::machine_table(from_file) == mgpu::sim::describe_machine(from_file));
}
