// Link construction and the labels nvidia-smi topo -m uses for them.
#include <cstdio>
#include <string>
#include <vector>

#include "topology/topology_detail.h"

namespace mgpu::sim {

const char* to_string(LinkType type)
{
    switch (type) {
    case LinkType::None: return "none";
    case LinkType::PCIe: return "pcie";
    case LinkType::NVLink: return "nvlink";
    }
    return "none";
}

const char* to_string(PciePath path)
{
    switch (path) {
    case PciePath::PIX: return "PIX";
    case PciePath::PXB: return "PXB";
    case PciePath::PHB: return "PHB";
    case PciePath::NODE: return "NODE";
    case PciePath::SYS: return "SYS";
    }
    return "SYS";
}

std::string link_label(const LinkSpec& link)
{
    switch (link.type) {
    case LinkType::NVLink: return "NV" + std::to_string(link.nvlinks);
    case LinkType::PCIe: return to_string(link.pcie_path);
    case LinkType::None: return "-";
    }
    return "-";
}

std::string pci_bus_id(const DeviceSpec& device)
{
    char text[32];
    std::snprintf(text, sizeof text, "%04X:%02X:%02X.0", static_cast<unsigned>(device.pci_domain),
                  static_cast<unsigned>(device.pci_bus), static_cast<unsigned>(device.pci_device));
    return text;
}

namespace topology_detail {

// NVLink peers report the best performance rank and native atomics; that is what peer
// ranking code (NCCL, QUDA) relies on to prefer them over PCIe.
LinkSpec nvlink_link(int nvlinks, double gbps)
{
    LinkSpec link;
    link.type = LinkType::NVLink;
    link.can_peer = true;
    link.gbps = gbps;
    link.perf_rank = 0;
    link.native_atomics = true;
    link.nvlinks = nvlinks;
    return link;
}

// PCIe peer traffic ranks below NVLink and has no native atomics; pairs that cannot peer
// report 0 for both attributes, as the driver does for unsupported pairs.
LinkSpec pcie_link(PciePath path, bool can_peer, double gbps)
{
    LinkSpec link;
    link.type = LinkType::PCIe;
    link.can_peer = can_peer;
    link.gbps = gbps;
    link.perf_rank = can_peer ? 1 : 0;
    link.native_atomics = false;
    link.pcie_path = path;
    return link;
}

std::vector<std::vector<LinkSpec>> uniform_links(std::size_t n, const LinkSpec& link)
{
    std::vector<std::vector<LinkSpec>> links(n, std::vector<LinkSpec>(n));
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b)
            if (a != b) links[a][b] = link;
    return links;
}

}  // namespace topology_detail
}  // namespace mgpu::sim
