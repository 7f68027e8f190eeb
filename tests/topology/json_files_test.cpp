// Machine files that are right: the example, the list and matrix forms, and saving a machine
// then loading it again.
#include <string>

#include <doctest/doctest.h>

#include "h200_facts.h"
#include "mgpu/sim/machine.h"
#include "temp_files.h"

using namespace mgpu::sim;

namespace {

const std::string kExample = std::string(MGPU_TOPOLOGIES_DIR) + "/example-2gpu.json";

void check_same_machine(const MachineSpec& a, const MachineSpec& b)
{
    CHECK(a.name == b.name);
    CHECK(a.description == b.description);
    CHECK(a.has_driver == b.has_driver);
    REQUIRE(a.devices.size() == b.devices.size());
    for (std::size_t i = 0; i < a.devices.size(); ++i) {
        CAPTURE(i);
        CHECK(a.devices[i] == b.devices[i]);
    }
    CHECK(a.links == b.links);
    CHECK(a.shared_host_links == b.shared_host_links);
    CHECK(a.cost == b.cost);
}

}  // namespace

TEST_CASE("the example file: two H200 joined by NVLink, the second written out in full")
{
    const MachineSpec m = load_machine(kExample);
    CHECK(m.name == "example-2gpu");
    CHECK(m.source == kExample);
    REQUIRE(m.devices.size() == 2);

    // The full description carries the cuda-facts.md values, so it equals the preset apart
    // from where the board sits and its uuid.
    DeviceSpec expected = device_preset("h200");
    expected.pci_bus = 42;
    expected.pci_device = 0;
    expected.uuid = "GPU-a83e91d4-26f0-4b7c-8d15-c0e9f2a47b32";
    CHECK(m.devices[1] == expected);
    CHECK(m.devices[1].total_mem == h200_facts::kTotalGlobalMem);
    CHECK(m.devices[1].sm_count == h200_facts::kMultiProcessorCount);

    CHECK(m.devices[0].name == h200_facts::kName);
    CHECK(m.devices[0].pci_bus == 24);
    CHECK(pci_bus_id(m.devices[0]) == "0000:18:00.0");
    CHECK(m.devices[0].uuid == "GPU-5f0c2a1e-7b3d-4c19-9e2a-3d41b6c8e701");

    for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
        const LinkSpec& link = m.links[a][b];
        CHECK(link.type == LinkType::NVLink);
        CHECK(link.can_peer);
        CHECK(link.nvlinks == 18);
        CHECK(link.gbps == 375.0);
    }
    CHECK(m.cost == CostModel{});
}

TEST_CASE("round trip: the example and every preset, saved and loaded again, are unchanged")
{
    TempFolder folder;
    MachineSpec example = load_machine(kExample);
    const MachineSpec again = load_machine(folder.write("example.json", machine_to_json(example)));
    check_same_machine(again, example);

    for (const auto& name : preset_names()) {
        CAPTURE(name);
        const MachineSpec preset = load_machine(name);
        check_same_machine(load_machine(folder.write(name + ".json", machine_to_json(preset))), preset);
    }
}

TEST_CASE("the matrix form reads like nvidia-smi topo -m")
{
    TempFolder folder;
    const MachineSpec m = load_machine(folder.write("matrix.json", R"({
        // Two bridged boards and a third on the other socket.
        "name": "matrix",
        "devices": [{"preset": "h200"}, {"preset": "h200"}, {"preset": "l4"}],
        "links": {
            "matrix": [["X", "NV12", "SYS"], ["NV12", "X", "SYS"], ["SYS", "SYS", "X"]],
            "gbps": [[0, 250, 30], [250, 0, 30], [30, 30, 0]]
        }
    })"));
    REQUIRE(m.devices.size() == 3);
    CHECK(m.links[0][1].type == LinkType::NVLink);
    CHECK(m.links[0][1].nvlinks == 12);
    CHECK(m.links[0][1].can_peer);   // NVLink peers unless the file says otherwise
    CHECK(m.links[1][0].gbps == 250.0);
    CHECK(m.links[0][2].type == LinkType::PCIe);
    CHECK(m.links[0][2].pcie_path == PciePath::SYS);
    CHECK_FALSE(m.links[2][0].can_peer);
    CHECK(m.links[2][0].gbps == 30.0);
}

TEST_CASE("list form defaults: unlisted pairs are PCIe without peer access; one-way links stay one-way")
{
    TempFolder folder;
    const MachineSpec m = load_machine(folder.write("oneway.json", R"({
        "name": "oneway",
        "devices": [{"preset": "h200"}, {"preset": "h200"}, {"preset": "h200"}],
        "links": [{"from": 0, "to": 1, "type": "pcie", "pcie_path": "PIX", "can_peer": true, "both_ways": false}],
        "cost": {"h2d_pinned_gbps": 20}
    })"));
    CHECK(m.links[0][1].can_peer);
    CHECK(m.links[0][1].pcie_path == PciePath::PIX);
    CHECK(m.links[0][1].gbps == 20.0);   // a PCIe peer copy runs at the host copy speed unless given
    CHECK_FALSE(m.links[1][0].can_peer);
    CHECK(m.links[1][0].type == LinkType::PCIe);
    CHECK(m.links[1][0].pcie_path == PciePath::SYS);
    CHECK_FALSE(m.links[2][0].can_peer);
}

TEST_CASE("two preset devices without placement get their own PCI buses; a smaller device keeps the driver's share")
{
    TempFolder folder;
    const MachineSpec m = load_machine(folder.write("plain.json", R"({
        "name": "plain",
        "devices": [{"preset": "h200"}, {"preset": "h200", "total_mem": 17179869184}]
    })"));
    REQUIRE(m.devices.size() == 2);
    CHECK(pci_bus_id(m.devices[0]) != pci_bus_id(m.devices[1]));
    CHECK(m.devices[0].uuid != m.devices[1].uuid);
    // 16 GiB less what the H200's driver keeps (total minus free in cuda-facts.md).
    CHECK(m.devices[1].free_mem == 17179869184ull - (h200_facts::kTotalGlobalMem - h200_facts::kFreeAtStart));
}

TEST_CASE("a machine file can describe a machine without a driver, or with no devices")
{
    TempFolder folder;
    const MachineSpec none = load_machine(folder.write("nodriver.json", R"({"name": "bare", "has_driver": false})"));
    CHECK_FALSE(none.has_driver);
    CHECK(none.devices.empty());
    const MachineSpec empty = load_machine(folder.write("empty.json", R"({"name": "empty", "devices": []})"));
    CHECK(empty.has_driver);
    CHECK(empty.devices.empty());
}
