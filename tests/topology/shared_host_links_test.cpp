// Which devices share a link to the host: in the presets (their documented layout), in machine
// files, and after CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER renumber the devices.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "mgpu/sim/machine.h"
#include "temp_files.h"

using namespace mgpu::sim;

namespace {

std::vector<std::vector<int>> members(const MachineSpec& m)
{
    std::vector<std::vector<int>> found;
    for (const auto& link : m.shared_host_links) found.push_back(link.devices);
    return found;
}

std::string error_for(const TempFolder& folder, const std::string& text)
{
    try {
        load_machine(folder.write("m.json", text));
    } catch (const TopologyError& e) {
        return e.what();
    }
    return "(no error)";
}

const std::string kTwoDevices = R"({"name": "t", "devices": [{"preset": "h200"}, {"preset": "h200"}], )";

}  // namespace

TEST_CASE("hgx-h200-8 puts two GPUs behind each of four PCIe switches; islands-2x2 one switch per NVLink pair")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    CHECK(members(hgx) == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
    for (const auto& link : hgx.shared_host_links) CHECK(link.gbps == hgx.cost.h2d_pinned_gbps);
    const MachineSpec islands = load_machine("islands-2x2");
    CHECK(members(islands) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
}

TEST_CASE("machines whose boards each have their own path to the host share nothing")
{
    for (const char* name : {"h200", "pcie-4", "mixed-3", "none"}) {
        CAPTURE(name);
        CHECK(load_machine(name).shared_host_links.empty());
    }
}

TEST_CASE("CUDA_VISIBLE_DEVICES keeps a shared link with its visible devices, renumbered, while two are left")
{
    const MachineSpec hgx = load_machine("hgx-h200-8");
    // Machine GPUs 3, 2 and 4 become 0, 1 and 2: 3 and 2 still share switch 1; 4 is alone on switch 2.
    const MachineSpec visible = apply_visible_devices(hgx, "3,2,4");
    REQUIRE(visible.devices.size() == 3);
    REQUIRE(visible.shared_host_links.size() == 1);
    CHECK(visible.shared_host_links[0].name == hgx.shared_host_links[1].name);
    CHECK(visible.shared_host_links[0].devices == std::vector<int>{0, 1});
    CHECK(apply_visible_devices(hgx, "0,2,4,6").shared_host_links.empty());
    CHECK(apply_visible_devices(hgx, "0,0").shared_host_links.empty());
}

TEST_CASE("CUDA_DEVICE_ORDER=PCI_BUS_ID renumbers the devices of a shared link with them")
{
    MachineSpec m = load_machine("islands-2x2");
    // Reverse the buses, so that sorting by bus reverses the devices.
    for (std::size_t i = 0; i < m.devices.size(); ++i) m.devices[i].pci_bus = 0x10 * static_cast<int>(4 - i);
    const MachineSpec sorted = apply_device_order(m, "PCI_BUS_ID");
    CHECK(members(sorted) == std::vector<std::vector<int>>{{2, 3}, {0, 1}});
}

TEST_CASE("a machine file names the shared links; gbps defaults to the pinned host-to-device speed")
{
    TempFolder folder;
    const MachineSpec m = load_machine(folder.write("m.json", kTwoDevices +
        R"("shared_host_links": [{"devices": [1, 0]}], "cost": {"h2d_pinned_gbps": 30}})"));
    REQUIRE(m.shared_host_links.size() == 1);
    CHECK(m.shared_host_links[0].devices == std::vector<int>{1, 0});
    CHECK(m.shared_host_links[0].gbps == 30.0);
    CHECK(m.shared_host_links[0].name == "shared link 0");
    CHECK(load_machine(folder.write("again.json", machine_to_json(m))).shared_host_links == m.shared_host_links);
}

TEST_CASE("a shared link with an unknown device, a device twice or a single device is refused, naming the field")
{
    TempFolder folder;
    const std::string unknown = error_for(folder, kTwoDevices + R"("shared_host_links": [{"devices": [0, 2]}]})");
    CHECK(unknown.find("shared_host_links[0].devices[1]") != std::string::npos);
    const std::string twice = error_for(folder, kTwoDevices + R"("shared_host_links": [{"devices": [1, 1]}]})");
    CHECK(twice.find("listed twice") != std::string::npos);
    const std::string single = error_for(folder, kTwoDevices + R"("shared_host_links": [{"devices": [1]}]})");
    CHECK(single.find("at least two devices") != std::string::npos);
    const std::string speed =
        error_for(folder, kTwoDevices + R"("shared_host_links": [{"devices": [0, 1], "gbps": 0}]})");
    CHECK(speed.find("shared_host_links[0].gbps") != std::string::npos);
}
