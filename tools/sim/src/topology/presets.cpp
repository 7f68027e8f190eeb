// The built-in machines. Each one stands for a kind of machine a student meets, with real
// boards and a link layout that real servers have.
#include <optional>
#include <string>
#include <vector>

#include "topology/topology_detail.h"

namespace mgpu::sim {
namespace {

using namespace topology_detail;

DeviceSpec on_bus(DeviceSpec device, int bus, int slot = 0)
{
    device.pci_bus = bus;
    device.pci_device = slot;
    return device;
}

// The machine cuda-facts.md was measured on.
MachineSpec single_h200()
{
    MachineSpec m;
    m.name = "h200";
    m.description = "one NVIDIA H200 (the measured profile)";
    m.devices = {device_preset("h200")};
    // Host links: the one GPU has its own PCIe Gen5 x16 link; nothing is shared.
    return m;
}

// HGX H200 board: every GPU reaches every other through the NVSwitch fabric with all 18 of
// its NVLink 4 links, so nvidia-smi shows NV18 for every pair and every ordered pair can peer.
MachineSpec hgx_h200_8()
{
    MachineSpec m;
    m.name = "hgx-h200-8";
    m.description = "8 x NVIDIA H200 on NVSwitch (HGX board): every pair peers over NVLink 4";
    const int buses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
    for (int bus : buses) m.devices.push_back(on_bus(device_preset("h200"), bus));
    m.links = uniform_links(m.devices.size(), nvlink_link(kNvlinksPerH200, kNvlink4FullGbps));
    // Host links: the board reaches its two CPU sockets through four PCIe Gen5 switches, two GPUs
    // behind each, and each switch has one x16 uplink. GPUs 0-1 and 2-3 hang off socket 0, 4-5
    // and 6-7 off socket 1. Two GPUs of one switch copying from (or to) the host at once share
    // one link's bandwidth; GPUs of different switches do not slow each other down (a socket's
    // memory outruns two x16 links).
    for (int pair = 0; pair < 4; ++pair)
        m.shared_host_links.push_back({"switch " + std::to_string(pair), {2 * pair, 2 * pair + 1}, m.cost.h2d_pinned_gbps});
    return m;
}

// Four NVIDIA L4 boards (PCIe Gen4 x16) in a cloud virtual machine: each board is passed
// through on its own slot behind the virtual host bridge, and peer-to-peer over PCIe is not
// exposed, so cudaDeviceCanAccessPeer answers 0 for every pair and peer copies are staged
// through host memory.
MachineSpec pcie_4()
{
    MachineSpec m;
    m.name = "pcie-4";
    m.description = "4 x NVIDIA L4 on PCIe Gen4 in a virtual machine: no pair can peer";
    for (int slot = 3; slot < 7; ++slot) m.devices.push_back(on_bus(device_preset("l4"), 0, slot));
    // Gen4 x16 has half the line rate of the Gen5 link the H200 figures were measured on;
    // pageable copies are bound by host memcpy and stay as measured.
    const CostModel measured;
    m.cost.h2d_pinned_gbps = measured.h2d_pinned_gbps / 2;
    m.cost.d2h_pinned_gbps = measured.d2h_pinned_gbps / 2;
    m.cost.staged_peer_gbps = measured.staged_peer_gbps / 2;
    m.links = uniform_links(m.devices.size(), pcie_link(PciePath::PHB, false, m.cost.h2d_pinned_gbps));
    // Host links: each board is passed through on its own slot of the host bridge, and four Gen4
    // x16 links together stay under what the host's memory delivers: nothing is shared.
    return m;
}

// A two-socket server with NVLink-bridged pairs of boards, one pair per socket: peers within
// a pair, and only staged copies across the socket link. The measured H200 profile stands in
// for each board so that NVLink speeds match the HGX preset.
MachineSpec islands_2x2()
{
    MachineSpec m;
    m.name = "islands-2x2";
    m.description = "4 x NVIDIA H200 as two NVLink pairs (0-1, 2-3) on two CPU sockets: no peer access across pairs";
    const int buses[] = {0x17, 0x31, 0xb1, 0xca};
    for (int bus : buses) m.devices.push_back(on_bus(device_preset("h200"), bus));
    m.links = uniform_links(m.devices.size(), pcie_link(PciePath::SYS, false, m.cost.h2d_pinned_gbps));
    const LinkSpec bridge = nvlink_link(kNvlinksPerH200, kNvlink4FullGbps);
    m.links[0][1] = m.links[1][0] = bridge;
    m.links[2][3] = m.links[3][2] = bridge;
    // Host links: each bridged pair sits behind one PCIe Gen5 switch with a single x16 uplink to
    // its socket, so GPUs 0 and 1 share one link to the host and GPUs 2 and 3 another.
    m.shared_host_links = {{"switch 0 (socket 0)", {0, 1}, m.cost.h2d_pinned_gbps},
                           {"switch 1 (socket 1)", {2, 3}, m.cost.h2d_pinned_gbps}};
    return m;
}

// Three different boards so that lesson 1's enumeration has something to choose between:
// memory, compute capability and SM count all differ. The driver offers peer access only
// between boards of one architecture, so no pair can peer.
MachineSpec mixed_3()
{
    MachineSpec m;
    m.name = "mixed-3";
    m.description = "NVIDIA H200, A100 80GB and L4 in one server: different memory, compute capability and SMs";
    m.devices = {on_bus(device_preset("h200"), 0x1b), on_bus(device_preset("a100-sxm4-80gb"), 0x68),
                 on_bus(device_preset("l4"), 0xb3)};
    // The H200 and the A100 share socket 0; the L4 hangs off socket 1.
    m.links = uniform_links(m.devices.size(), pcie_link(PciePath::SYS, false, m.cost.h2d_pinned_gbps));
    m.links[0][1] = m.links[1][0] = pcie_link(PciePath::NODE, false, m.cost.h2d_pinned_gbps);
    // Host links: each board has its own root port (NODE: no switch between the H200 and the
    // A100), so nothing is shared.
    return m;
}

// A machine without a GPU or driver: cudaGetDeviceCount answers 35.
MachineSpec no_driver()
{
    MachineSpec m;
    m.name = "none";
    m.description = "no GPU and no CUDA driver";
    m.has_driver = false;
    return m;
}

}  // namespace

std::vector<std::string> preset_names()
{
    return {"h200", "hgx-h200-8", "pcie-4", "islands-2x2", "mixed-3", "none"};
}

namespace topology_detail {

std::optional<MachineSpec> preset_machine(const std::string& name)
{
    std::optional<MachineSpec> machine;
    if (name == "h200") machine = single_h200();
    else if (name == "hgx-h200-8") machine = hgx_h200_8();
    else if (name == "pcie-4") machine = pcie_4();
    else if (name == "islands-2x2") machine = islands_2x2();
    else if (name == "mixed-3") machine = mixed_3();
    else if (name == "none") machine = no_driver();
    if (machine) {
        if (machine->links.empty())
            machine->links.assign(machine->devices.size(), std::vector<LinkSpec>(machine->devices.size()));
        fill_missing_uuids(*machine);
    }
    return machine;
}

}  // namespace topology_detail
}  // namespace mgpu::sim
