#include "machine_table.h"

#include <cstdio>
#include <set>
#include <vector>

#include "columns.h"
#include "translate.h"

namespace mgpu::cli {

namespace {

using Rows = std::vector<std::vector<std::string>>;

// Columns padded to their widest cell plus two spaces; no trailing blanks. Widths count terminal
// columns, so Japanese cells line up too.
std::string format_rows(const Rows& rows, const std::string& indent) {
    std::vector<std::size_t> widths;
    for (const auto& row : rows)
        for (std::size_t c = 0; c < row.size(); ++c) {
            if (widths.size() <= c) widths.push_back(0);
            widths[c] = std::max(widths[c], columns_of(row[c]));
        }
    std::string out;
    for (const auto& row : rows) {
        std::string line = indent;
        for (std::size_t c = 0; c < row.size(); ++c)
            line += c + 1 < row.size() ? pad_to_columns(row[c], widths[c] + 2) : row[c];
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string gpu(std::size_t i) { return "GPU" + std::to_string(i); }

const sim::LinkSpec& link_between(const sim::MachineSpec& m, std::size_t a, std::size_t b) {
    static const sim::LinkSpec none;
    if (a < m.links.size() && b < m.links[a].size()) return m.links[a][b];
    return none;
}

// A device-by-device matrix with "X" on the diagonal; cell(a, b) fills the rest.
template <typename Cell>
Rows device_matrix(std::size_t n, Cell cell) {
    Rows rows(1, std::vector<std::string>{""});
    for (std::size_t b = 0; b < n; ++b) rows[0].push_back(gpu(b));
    for (std::size_t a = 0; a < n; ++a) {
        std::vector<std::string> row = {gpu(a)};
        for (std::size_t b = 0; b < n; ++b) row.push_back(a == b ? "X" : cell(a, b));
        rows.push_back(row);
    }
    return rows;
}

std::string legend(const std::set<std::string>& labels_used, bool any_peer, bool any_no_peer) {
    struct Entry {
        const char* label;
        const char* meaning;
    };
    static const Entry entries[] = {
        {"X", N_("the device itself")},
        {"NV#", N_("joined by a bonded set of # NVLinks")},
        {"PIX", N_("PCIe through at most one PCIe switch")},
        {"PXB", N_("PCIe through several PCIe switches, without passing the CPU")},
        {"PHB", N_("PCIe through a CPU's host bridge")},
        {"NODE", N_("PCIe between host bridges of one CPU socket")},
        {"SYS", N_("PCIe and the link between CPU sockets")},
        {"-", N_("no connection")},
    };
    Rows rows;
    for (const auto& e : entries)
        if (labels_used.count(e.label)) rows.push_back({e.label, "= " + std::string(tr(e.meaning))});
    if (any_peer)
        rows.push_back({"OK", "= " + std::string(tr("can peer: cudaDeviceCanAccessPeer gives 1; after cudaDeviceEnablePeerAccess "
                                                    "the row's kernels reach the column's memory"))});
    if (any_no_peer)
        rows.push_back({"NS", "= " + std::string(tr("cannot peer: cudaDeviceCanAccessPeer gives 0; cudaMemcpyPeer still works, "
                                                    "staged through host memory"))});
    return format_rows(rows, "  ");
}

std::string one_decimal(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

std::string gib(std::size_t bytes) {
    return one_decimal(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)) + " GiB";
}

}  // namespace

std::string machine_table(const sim::MachineSpec& machine) {
    std::string out = fill(tr("Machine {}"), machine.name);
    if (!machine.description.empty()) out += ": " + machine.description;
    out += "\n";
    if (!machine.source.empty()) out += fill(tr("Read from {}"), machine.source) + "\n";
    if (!machine.has_driver)
        return out + tr("No CUDA driver: cudaGetDeviceCount returns 35 (cudaErrorInsufficientDriver).") + "\n";
    const std::size_t n = machine.devices.size();
    if (n == 0)
        return out + tr("No visible devices: cudaGetDeviceCount returns 100 (cudaErrorNoDevice); CUDA_VISIBLE_DEVICES "
                        "may be hiding them.") + "\n";

    std::set<std::string> labels = {"X"};
    bool any_peer = false, any_no_peer = false;
    const Rows links = device_matrix(n, [&](std::size_t a, std::size_t b) {
        const sim::LinkSpec& link = link_between(machine, a, b);
        labels.insert(link.type == sim::LinkType::NVLink ? "NV#" : sim::link_label(link));
        return sim::link_label(link);
    });
    const Rows peers = device_matrix(n, [&](std::size_t a, std::size_t b) {
        const bool can = link_between(machine, a, b).can_peer;
        (can ? any_peer : any_no_peer) = true;
        return std::string(can ? "OK" : "NS");
    });

    out += "\n" + std::string(tr("Links (as nvidia-smi topo -m shows them):")) + "\n" + format_rows(links, "  ");
    out += "\n" + std::string(tr("Peer access, row to column (cudaDeviceCanAccessPeer(&can, row, column)):")) + "\n" +
           format_rows(peers, "  ");
    out += "\n" + std::string(tr("Legend:")) + "\n" + legend(labels, any_peer, any_no_peer);

    Rows devices;
    for (std::size_t i = 0; i < n; ++i) {
        const sim::DeviceSpec& d = machine.devices[i];
        devices.push_back({gpu(i), d.name, gib(d.total_mem), fill(tr("{} SMs"), d.sm_count),
                           fill(tr("compute capability {0}.{1}"), d.major, d.minor), "PCI " + sim::pci_bus_id(d)});
    }
    out += "\n" + std::string(tr("Devices:")) + "\n" + format_rows(devices, "  ");
    out += "\n" + std::string(tr("Shared host links (host copies of these devices at the same time split the link's speed):")) +
           "\n";
    if (machine.shared_host_links.empty()) out += "  " + std::string(tr("none: every device has its own path to host memory")) + "\n";
    for (const sim::SharedHostLink& link : machine.shared_host_links) {
        std::string members;
        for (std::size_t i = 0; i < link.devices.size(); ++i)
            members += (i ? ", " : "") + gpu(static_cast<std::size_t>(link.devices[i]));
        out += "  " + fill(tr("{0}: {1} ({2} GB/s each way)"), link.name, members, one_decimal(link.gbps)) + "\n";
    }
    if (!machine.physical_index.empty()) {
        std::string shown;
        for (std::size_t i = 0; i < machine.physical_index.size(); ++i)
            shown += (i ? ", " : "") +
                     fill(tr("{0} is the machine's {1}"), gpu(i), gpu(static_cast<std::size_t>(machine.physical_index[i])));
        out += "\n" + fill(tr("CUDA_VISIBLE_DEVICES renumbers them: {}."), shown) + "\n";
    }
    return out;
}

}  // namespace mgpu::cli
