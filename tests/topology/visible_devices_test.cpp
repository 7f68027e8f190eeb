// CUDA_VISIBLE_DEVICES, with the rows of cuda-facts.md first.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "mgpu/sim/machine.h"

using namespace mgpu::sim;

namespace {

// The PCI buses of the visible devices: which physical boards are shown, in which order.
std::vector<int> buses(const MachineSpec& m)
{
    std::vector<int> out;
    for (const auto& d : m.devices) out.push_back(d.pci_bus);
    return out;
}

}  // namespace

TEST_CASE("cuda-facts.md: unset shows every device")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    const MachineSpec visible = apply_visible_devices(hgx, nullptr);
    CHECK(visible.devices == hgx.devices);
    CHECK(visible.links == hgx.links);
}

TEST_CASE("cuda-facts.md: an empty value hides every device but keeps the driver (so 100, not 35)")
{
    const MachineSpec visible = apply_visible_devices(load_machine("hgx-h200-8"), "");
    CHECK(visible.has_driver);
    CHECK(visible.devices.empty());
    CHECK(visible.links.empty());
}

TEST_CASE("cuda-facts.md: \"0,1\" on a one-GPU machine gives one device, \"1\" gives none")
{
    const MachineSpec h200 = load_machine("h200");
    CHECK(apply_visible_devices(h200, "0,1").devices.size() == 1);
    CHECK(apply_visible_devices(h200, "1").devices.empty());
    CHECK(apply_visible_devices(h200, "1,0").devices.empty());
}

TEST_CASE("a list enumerates in list order and stops at the first invalid entry")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    CHECK(buses(apply_visible_devices(hgx, "3,1")) == std::vector<int>{0x5d, 0x2a});
    CHECK(buses(apply_visible_devices(hgx, "7,0,9,2")) == std::vector<int>{0xdb, 0x18});
    CHECK(buses(apply_visible_devices(hgx, "1,-1,2")) == std::vector<int>{0x2a});
    CHECK(apply_visible_devices(hgx, "-1").devices.empty());
    CHECK(apply_visible_devices(hgx, "one").devices.empty());
    CHECK(buses(apply_visible_devices(hgx, "2,x")) == std::vector<int>{0x3a});
    CHECK(buses(apply_visible_devices(hgx, "5,,6")) == std::vector<int>{0xab});
}

TEST_CASE("cuda-facts.md: a device listed twice refuses the whole list (\"0,0\" gives 101)")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    for (const char* list : {"4,4", "1,4,1"}) {
        CAPTURE(list);
        const MachineSpec refused = apply_visible_devices(hgx, list);
        CHECK(refused.devices.empty());
        CHECK(!refused.enumeration_problem.empty());
    }
    // A repeat after the first invalid entry is never read.
    CHECK(buses(apply_visible_devices(hgx, "4,x,4")) == std::vector<int>{0x9a});
    CHECK(apply_visible_devices(hgx, "4,x,4").enumeration_problem.empty());
}

TEST_CASE("CUDA_DEVICE_ORDER: FASTEST_FIRST keeps the machine's order, PCI_BUS_ID sorts by bus, others are refused")
{
    MachineSpec reversed = load_machine("mixed-3");
    std::swap(reversed.devices[0], reversed.devices[2]);
    CHECK(buses(apply_device_order(reversed, nullptr)) == buses(reversed));
    CHECK(buses(apply_device_order(reversed, "FASTEST_FIRST")) == buses(reversed));
    const MachineSpec by_bus = apply_device_order(reversed, "PCI_BUS_ID");
    CHECK(buses(by_bus) == std::vector<int>{0x1b, 0x68, 0xb3});
    CHECK(by_bus.physical_index == std::vector<int>{2, 1, 0});
    const MachineSpec refused = apply_device_order(reversed, "bogus");
    CHECK(refused.devices.empty());
    CHECK(!refused.enumeration_problem.empty());
}

TEST_CASE("links follow the devices they join")
{
    // Physical 2 and 3 are an NVLink pair; 0 is on the other island.
    const MachineSpec visible = apply_visible_devices(load_machine("islands-2x2"), "2,0,3");
    REQUIRE(visible.devices.size() == 3);
    REQUIRE(visible.links.size() == 3);
    CHECK(visible.links[0][2].can_peer);   // physical 2 -> 3
    CHECK(visible.links[2][0].can_peer);   // physical 3 -> 2
    CHECK(visible.links[0][2].type == LinkType::NVLink);
    CHECK_FALSE(visible.links[0][1].can_peer);   // physical 2 -> 0
    CHECK_FALSE(visible.links[1][2].can_peer);   // physical 0 -> 3
    CHECK(visible.links[1][1] == LinkSpec{});
}

TEST_CASE("uuid entries: a full uuid or a prefix that names one device")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    const std::string third = hgx.devices[3].uuid;
    const std::string list = third + ",0";
    CHECK(buses(apply_visible_devices(hgx, list.c_str())) == std::vector<int>{0x5d, 0x18});

    // The shortest prefix that names device 5 alone.
    const std::string& sixth = hgx.devices[5].uuid;
    std::size_t length = 5;
    auto unique = [&](std::size_t len) {
        int matches = 0;
        for (const auto& d : hgx.devices) matches += d.uuid.compare(0, len, sixth, 0, len) == 0;
        return matches == 1;
    };
    while (!unique(length)) ++length;
    const std::string prefix = sixth.substr(0, length);
    CHECK(buses(apply_visible_devices(hgx, prefix.c_str())) == std::vector<int>{0xab});

    CHECK(apply_visible_devices(hgx, "GPU-").devices.empty());
    CHECK(apply_visible_devices(hgx, "GPU-00000000-0000-0000-0000-000000000000").devices.empty());
}

TEST_CASE("a machine without a driver stays without one")
{
    const MachineSpec none = apply_visible_devices(load_machine("none"), "0");
    CHECK_FALSE(none.has_driver);
    CHECK(none.devices.empty());
}

TEST_CASE("each visible device remembers its number on the whole machine, also when narrowed twice")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    CHECK(hgx.physical_index.empty());
    const MachineSpec once = apply_visible_devices(hgx, "6,2,4");
    CHECK(once.physical_index == std::vector<int>{6, 2, 4});
    const MachineSpec twice = apply_visible_devices(once, "2,0");
    CHECK(twice.physical_index == std::vector<int>{4, 6});
    CHECK(buses(twice) == std::vector<int>{0x9a, 0xba});
}
