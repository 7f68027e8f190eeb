// What `mgpu topo` prints: the link matrix as nvidia-smi topo -m shows it, which ordered
// pairs can peer, a legend for the labels used, and one line per device.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "mgpu/sim/machine.h"

namespace mgpu::sim {
namespace {

using Table = std::vector<std::vector<std::string>>;

// Columns padded to their widest cell plus two spaces; no trailing blanks.
std::string format_table(const Table& rows, const std::string& indent)
{
    std::vector<std::size_t> widths;
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (widths.size() <= c) widths.push_back(0);
            widths[c] = std::max(widths[c], row[c].size());
        }
    std::string out;
    for (const auto& row : rows) {
        std::string line = indent;
        for (std::size_t c = 0; c < row.size(); ++c) {
            line += row[c];
            if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string gpu(std::size_t i) { return "GPU" + std::to_string(i); }

const LinkSpec& link_between(const MachineSpec& m, std::size_t a, std::size_t b)
{
    static const LinkSpec none;
    if (a < m.links.size() && b < m.links[a].size()) return m.links[a][b];
    return none;
}

// A device-by-device matrix with "X" on the diagonal; cell(a, b) fills the rest.
template <typename Cell>
Table device_matrix(std::size_t n, Cell cell)
{
    Table rows(1, std::vector<std::string>{""});
    for (std::size_t b = 0; b < n; ++b) rows[0].push_back(gpu(b));
    for (std::size_t a = 0; a < n; ++a) {
        std::vector<std::string> row = {gpu(a)};
        for (std::size_t b = 0; b < n; ++b) row.push_back(a == b ? "X" : cell(a, b));
        rows.push_back(row);
    }
    return rows;
}

std::string legend(const std::set<std::string>& labels_used, bool any_peer, bool any_no_peer)
{
    struct Entry {
        const char* label;
        const char* meaning;
    };
    static const Entry entries[] = {
        {"X", "the device itself"},
        {"NV#", "joined by a bonded set of # NVLinks"},
        {"PIX", "PCIe through at most one PCIe switch"},
        {"PXB", "PCIe through several PCIe switches, without passing the CPU"},
        {"PHB", "PCIe through a CPU's host bridge"},
        {"NODE", "PCIe between host bridges of one CPU socket"},
        {"SYS", "PCIe and the link between CPU sockets"},
        {"-", "no connection"},
    };
    Table rows;
    for (const auto& e : entries)
        if (labels_used.count(e.label)) rows.push_back({e.label, "= " + std::string(e.meaning)});
    if (any_peer)
        rows.push_back({"OK", "= can peer: cudaDeviceCanAccessPeer gives 1; after cudaDeviceEnablePeerAccess the row's "
                              "kernels reach the column's memory"});
    if (any_no_peer)
        rows.push_back({"NS", "= cannot peer: cudaDeviceCanAccessPeer gives 0; cudaMemcpyPeer still works, staged "
                              "through host memory"});
    return format_table(rows, "  ");
}

std::string gib(std::size_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return text;
}

}  // namespace

std::string describe_machine(const MachineSpec& machine)
{
    std::string out = "Machine " + machine.name;
    if (!machine.description.empty()) out += ": " + machine.description;
    out += "\n";
    if (!machine.source.empty()) out += "Read from " + machine.source + "\n";
    if (!machine.has_driver) return out + "No CUDA driver: cudaGetDeviceCount returns 35 (cudaErrorInsufficientDriver).\n";
    const std::size_t n = machine.devices.size();
    if (n == 0)
        return out + "No visible devices: cudaGetDeviceCount returns 100 (cudaErrorNoDevice); "
                     "CUDA_VISIBLE_DEVICES may be hiding them.\n";

    std::set<std::string> labels = {"X"};
    bool any_peer = false, any_no_peer = false;
    const Table links = device_matrix(n, [&](std::size_t a, std::size_t b) {
        const LinkSpec& link = link_between(machine, a, b);
        labels.insert(link.type == LinkType::NVLink ? "NV#" : link_label(link));
        return link_label(link);
    });
    const Table peers = device_matrix(n, [&](std::size_t a, std::size_t b) {
        const bool can = link_between(machine, a, b).can_peer;
        (can ? any_peer : any_no_peer) = true;
        return std::string(can ? "OK" : "NS");
    });

    out += "\nLinks (as nvidia-smi topo -m shows them):\n" + format_table(links, "  ");
    out += "\nPeer access, row to column (cudaDeviceCanAccessPeer(&can, row, column)):\n" + format_table(peers, "  ");
    out += "\nLegend:\n" + legend(labels, any_peer, any_no_peer);

    Table devices;
    for (std::size_t i = 0; i < n; ++i) {
        const DeviceSpec& d = machine.devices[i];
        devices.push_back({gpu(i), d.name, gib(d.total_mem), std::to_string(d.sm_count) + " SMs",
                           "compute capability " + std::to_string(d.major) + "." + std::to_string(d.minor),
                           "PCI " + pci_bus_id(d)});
    }
    out += "\nDevices:\n" + format_table(devices, "  ");
    out += "\nShared host links (host copies of these devices at the same time split the link's speed):\n";
    if (machine.shared_host_links.empty()) out += "  none: every device has its own path to host memory\n";
    for (const SharedHostLink& link : machine.shared_host_links) {
        std::string members;
        for (std::size_t i = 0; i < link.devices.size(); ++i)
            members += (i ? ", " : "") + gpu(static_cast<std::size_t>(link.devices[i]));
        char speed[32];
        std::snprintf(speed, sizeof speed, "%.1f", link.gbps);
        out += "  " + link.name + ": " + members + " (" + speed + " GB/s each way)\n";
    }
    if (!machine.physical_index.empty()) {
        std::string shown;
        for (std::size_t i = 0; i < machine.physical_index.size(); ++i)
            shown += (i ? ", " : "") + gpu(i) + " is the machine's " + gpu(static_cast<std::size_t>(machine.physical_index[i]));
        out += "\nCUDA_VISIBLE_DEVICES renumbers them: " + shown + ".\n";
    }
    return out;
}

}  // namespace mgpu::sim
