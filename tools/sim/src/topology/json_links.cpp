// A machine file's "links": a list of pairs, or a matrix written as nvidia-smi topo -m prints it.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "topology/json_reader.h"
#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

using Links = std::vector<std::vector<LinkSpec>>;

const std::vector<std::string> kLinkKeys = {"from", "to", "type", "gbps", "can_peer", "both_ways",
                                            "nvlinks", "pcie_path", "perf_rank", "native_atomics"};
const std::vector<std::string> kMatrixKeys = {"matrix", "can_peer", "gbps"};
const std::vector<std::string> kLinkTypes = {"nvlink", "pcie", "none"};
const std::vector<std::string> kPciePaths = {"PIX", "PXB", "PHB", "NODE", "SYS"};
constexpr int kMaxNvlinks = 64;

PciePath pcie_path_named(const std::string& name)
{
    for (PciePath path : {PciePath::PIX, PciePath::PXB, PciePath::PHB, PciePath::NODE, PciePath::SYS})
        if (name == to_string(path)) return path;
    return PciePath::SYS;
}

// A link of the given kind with the defaults that kind has on real machines.
LinkSpec default_link(LinkType type, int nvlinks, PciePath path, double pcie_gbps)
{
    switch (type) {
    case LinkType::NVLink: return nvlink_link(nvlinks, nvlinks * kNvlink4PerLinkGbps);
    case LinkType::PCIe: return pcie_link(path, false, pcie_gbps);
    case LinkType::None: break;
    }
    return LinkSpec{};
}

int device_number(const JsonFields& fields, const Json& object, const std::string& path, const char* key,
                  std::size_t device_count)
{
    const std::string where = at_key(path, key);
    const long long id = fields.integer(fields.required(object, path, key, "a link names the devices it joins with \"from\" and \"to\""), where, 0);
    if (static_cast<std::size_t>(id) >= device_count)
        fields.fail(where, "device " + std::to_string(id) + " does not exist (the machine has " + std::to_string(device_count) +
                               (device_count == 1 ? " device)" : " devices)"));
    return static_cast<int>(id);
}

void read_link_list(const JsonFields& fields, const Json& list, std::size_t n, double pcie_gbps, Links& links)
{
    std::map<std::pair<int, int>, std::size_t> described_by;   // ordered pair -> index in the list
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = at_index("links", i);
        const Json& entry = list[i];
        fields.require_object(entry, path);
        fields.reject_unknown_keys(entry, path, kLinkKeys);
        const int from = device_number(fields, entry, path, "from", n);
        const int to = device_number(fields, entry, path, "to", n);
        if (from == to)
            fields.fail(path, "\"from\" and \"to\" are both " + std::to_string(from) +
                                  "; a device is never its own peer, so a link joins two different devices");

        const std::string type_name = fields.choice(fields.required(entry, path, "type", "say \"nvlink\", \"pcie\" or \"none\""),
                                                    at_key(path, "type"), "link type", kLinkTypes);
        const LinkType type = type_name == "nvlink" ? LinkType::NVLink : type_name == "pcie" ? LinkType::PCIe : LinkType::None;

        int nvlinks = kNvlinksPerH200;
        if (const Json* v = JsonFields::optional(entry, "nvlinks")) {
            if (type != LinkType::NVLink)
                fields.fail(at_key(path, "nvlinks"), "only an nvlink link has NVLinks (this link's type is " + type_name + ")");
            nvlinks = static_cast<int>(fields.integer(*v, at_key(path, "nvlinks"), 1, kMaxNvlinks));
        }
        PciePath pcie_path = PciePath::SYS;
        if (const Json* v = JsonFields::optional(entry, "pcie_path")) {
            if (type != LinkType::PCIe)
                fields.fail(at_key(path, "pcie_path"), "only a pcie link has a PCIe path (this link's type is " + type_name + ")");
            pcie_path = pcie_path_named(fields.choice(*v, at_key(path, "pcie_path"), "PCIe path", kPciePaths));
        }

        LinkSpec link = default_link(type, nvlinks, pcie_path, pcie_gbps);
        if (const Json* v = JsonFields::optional(entry, "can_peer")) {
            link.can_peer = fields.boolean(*v, at_key(path, "can_peer"));
            if (link.can_peer && type == LinkType::None)
                fields.fail(at_key(path, "can_peer"), "devices with no link between them (type \"none\") cannot peer");
            if (type == LinkType::PCIe) link.perf_rank = link.can_peer ? 1 : 0;
        }
        if (const Json* v = JsonFields::optional(entry, "gbps")) {
            if (type == LinkType::None) fields.fail(at_key(path, "gbps"), "a link of type \"none\" carries no traffic, so it has no speed");
            link.gbps = fields.positive_number(*v, at_key(path, "gbps"));
        }
        if (const Json* v = JsonFields::optional(entry, "perf_rank"))
            link.perf_rank = static_cast<int>(fields.integer(*v, at_key(path, "perf_rank"), 0, INT_MAX));
        if (const Json* v = JsonFields::optional(entry, "native_atomics")) link.native_atomics = fields.boolean(*v, at_key(path, "native_atomics"));
        bool both_ways = true;
        if (const Json* v = JsonFields::optional(entry, "both_ways")) both_ways = fields.boolean(*v, at_key(path, "both_ways"));

        std::vector<std::pair<int, int>> pairs = {{from, to}};
        if (both_ways) pairs.emplace_back(to, from);
        for (const auto& pair : pairs) {
            auto [earlier, fresh] = described_by.emplace(pair, i);
            if (!fresh)
                fields.fail(path, "the pair " + std::to_string(pair.first) + " -> " + std::to_string(pair.second) +
                                      " is already described by " + at_index("links", earlier->second) +
                                      " (both_ways is true unless set to false)");
            links[pair.first][pair.second] = link;
        }
    }
}

// One row per device, one cell per device: checks the shape and hands out each off-diagonal cell.
template <typename ReadCell>
void for_each_cell(const JsonFields& fields, const Json& matrix, const std::string& path, std::size_t n, ReadCell read_cell)
{
    auto count = [](std::size_t k, const char* what) { return std::to_string(k) + " " + what + (k == 1 ? "" : "s"); };
    if (!matrix.is_array() || matrix.size() != n)
        fields.fail(path, "expected " + count(n, "row") + " (one per device), got " +
                              (matrix.is_array() ? count(matrix.size(), "row") : describe_json_value(matrix)));
    for (std::size_t a = 0; a < n; ++a) {
        const std::string row_path = at_index(path, a);
        const Json& row = matrix[a];
        if (!row.is_array() || row.size() != n)
            fields.fail(row_path, "expected " + count(n, "entry") + " (one per device), got " +
                                      (row.is_array() ? count(row.size(), "entry") : describe_json_value(row)));
        for (std::size_t b = 0; b < n; ++b) read_cell(a, b, row[b], at_index(row_path, b));
    }
}

void read_link_matrix(const JsonFields& fields, const Json& object, std::size_t n, double pcie_gbps, Links& links)
{
    fields.reject_unknown_keys(object, "links", kMatrixKeys);
    const Json& matrix = fields.required(object, "links", "matrix", "the matrix form gives one row of labels (X, NV18, PHB, SYS...) per device");
    for_each_cell(fields, matrix, "links.matrix", n, [&](std::size_t a, std::size_t b, const Json& cell, const std::string& path) {
        const std::string label = fields.text(cell, path);
        if (a == b) {
            if (label != "X") fields.fail(path, "the diagonal is the device itself: write \"X\", got \"" + label + "\"");
            return;
        }
        if (label == "-") return;
        if (label.size() > 2 && label.compare(0, 2, "NV") == 0) {
            const std::string digits = label.substr(2);
            if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 2 ||
                std::stoi(digits) < 1 || std::stoi(digits) > kMaxNvlinks)
                fields.fail(path, "expected NV<n> with n from 1 to " + std::to_string(kMaxNvlinks) + " NVLinks, got \"" + label + "\"");
            links[a][b] = default_link(LinkType::NVLink, std::stoi(digits), PciePath::SYS, pcie_gbps);
            return;
        }
        bool is_pcie = false;
        for (const auto& name : kPciePaths) is_pcie = is_pcie || name == label;
        if (!is_pcie) {
            std::vector<std::string> examples = kPciePaths;
            examples.push_back("NV18");
            std::string problem = "unknown link label \"" + label + "\"";
            if (auto near = closest_match(label, examples)) problem += " (did you mean \"" + *near + "\"?)";
            fields.fail(path, problem + "; use NV<n> for n bonded NVLinks, PIX, PXB, PHB, NODE or SYS for PCIe, or - for no link");
        }
        links[a][b] = default_link(LinkType::PCIe, 0, pcie_path_named(label), pcie_gbps);
    });
    if (const Json* can_peer = JsonFields::optional(object, "can_peer")) {
        for_each_cell(fields, *can_peer, "links.can_peer", n, [&](std::size_t a, std::size_t b, const Json& cell, const std::string& path) {
            const bool peer = fields.boolean(cell, path);
            if (a == b) {
                if (peer) fields.fail(path, "a device is never its own peer: write false on the diagonal");
                return;
            }
            if (peer && links[a][b].type == LinkType::None)
                fields.fail(path, "devices " + std::to_string(a) + " and " + std::to_string(b) + " have no link (\"-\"), so they cannot peer");
            links[a][b].can_peer = peer;
            if (links[a][b].type == LinkType::PCIe) links[a][b].perf_rank = peer ? 1 : 0;
        });
    }
    if (const Json* gbps = JsonFields::optional(object, "gbps")) {
        for_each_cell(fields, *gbps, "links.gbps", n, [&](std::size_t a, std::size_t b, const Json& cell, const std::string& path) {
            if (a == b) {
                if (fields.non_negative_number(cell, path) != 0) fields.fail(path, "the diagonal is the device itself: write 0");
                return;
            }
            if (links[a][b].type == LinkType::None) {
                if (fields.non_negative_number(cell, path) != 0) fields.fail(path, "devices with no link (\"-\") have no speed: write 0");
                return;
            }
            links[a][b].gbps = fields.positive_number(cell, path);
        });
    }
}

}  // namespace

Links read_links(const JsonFields& fields, const Json* value, std::size_t n, double pcie_gbps)
{
    Links links(n, std::vector<LinkSpec>(n));
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b)
            if (a != b) links[a][b] = pcie_link(PciePath::SYS, false, pcie_gbps);
    if (!value) return links;
    if (value->is_array()) {
        read_link_list(fields, *value, n, pcie_gbps, links);
    } else if (value->is_object()) {
        read_link_matrix(fields, *value, n, pcie_gbps, links);
    } else {
        fields.fail("links", "expected a list of links [{\"from\": 0, \"to\": 1, ...}] or {\"matrix\": [...]}, got " +
                                 describe_json_value(*value));
    }
    return links;
}

}  // namespace mgpu::sim::topology_detail
