// Reads a machine file (FORMAT.md): parses the JSON with positions for syntax errors, then
// checks every field and builds the MachineSpec.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "topology/json_reader.h"
#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

constexpr std::size_t kMaxDevices = 64;

const std::vector<std::string> kMachineKeys = {"name", "description", "has_driver", "devices", "links", "shared_host_links", "cost"};

// Where the parser is inside the document, so that a repeated key can be named by its path
// (nlohmann::json would keep the last value without a word).
class KeyPathTracker {
public:
    bool on_event(Json::parse_event_t event, const Json& parsed)
    {
        using Event = Json::parse_event_t;
        switch (event) {
        case Event::object_start: frames_.push_back({false, 0, {}, {}}); break;
        case Event::array_start: frames_.push_back({true, 0, {}, {}}); break;
        case Event::key: {
            Frame& top = frames_.back();
            top.key = parsed.get<std::string>();
            if (!top.seen.insert(top.key).second && repeated_.empty()) repeated_ = current_path();
            break;
        }
        case Event::object_end:
        case Event::array_end:
            frames_.pop_back();
            value_done();
            break;
        case Event::value: value_done(); break;
        }
        return true;
    }
    const std::string& first_repeated_key() const { return repeated_; }

private:
    struct Frame {
        bool is_list;
        std::size_t index;
        std::string key;
        std::set<std::string> seen;
    };
    void value_done()
    {
        if (!frames_.empty() && frames_.back().is_list) ++frames_.back().index;
    }
    std::string current_path() const
    {
        std::string path;
        for (const auto& frame : frames_)
            path = frame.is_list ? at_index(path, frame.index) : at_key(path, frame.key);
        return path;
    }
    std::vector<Frame> frames_;
    std::string repeated_;
};

std::string read_whole_file(const std::string& path)
{
    std::error_code error;
    if (std::filesystem::is_directory(path, error))
        throw TopologyError("cannot read topology file \"" + path + "\": it is a directory; give the path of a .json file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TopologyError("cannot open topology file \"" + path + "\": " + std::strerror(errno));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// "syntax error while parsing object key - invalid literal; expected string literal" from
// nlohmann's message, without its prefix and without the raw "last read" bytes.
std::string parse_problem(const std::string& what)
{
    std::string problem = what;
    if (auto column = problem.find("column "); column != std::string::npos)
        if (auto colon = problem.find(": ", column); colon != std::string::npos) problem = problem.substr(colon + 2);
    if (auto last_read = problem.find("; last read: "); last_read != std::string::npos) {
        auto rest = problem.find("'; ", last_read);
        problem = problem.substr(0, last_read) + (rest == std::string::npos ? "" : problem.substr(rest + 1));
    }
    return problem;
}

Json parse_document(const std::string& file, const std::string& text)
{
    KeyPathTracker tracker;
    Json root;
    try {
        root = Json::parse(
            text, [&](int, Json::parse_event_t event, Json& parsed) { return tracker.on_event(event, parsed); },
            /*allow_exceptions=*/true, /*ignore_comments=*/true);
    } catch (const Json::parse_error& e) {
        // e.byte is the 1-based offset of the last byte read.
        const std::size_t at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
        std::size_t line = 1, line_start = 0;
        for (std::size_t i = 0; i < at; ++i)
            if (text[i] == '\n') ++line, line_start = i + 1;
        throw TopologyError(file + ": invalid JSON at line " + std::to_string(line) + ", column " +
                            std::to_string(at - line_start + 1) + ": " + parse_problem(e.what()));
    }
    if (!tracker.first_repeated_key().empty())
        throw TopologyError(file + ": " + tracker.first_repeated_key() +
                            ": appears twice in the same object; JSON keeps only one of them, so remove the other");
    return root;
}

CostModel read_cost(const JsonFields& fields, const Json* value)
{
    CostModel cost;
    if (!value) return cost;
    fields.require_object(*value, "cost");
    struct Term {
        const char* key;
        double CostModel::*field;
        bool may_be_zero;   // fixed costs may be switched off; speeds and sizes may not
    };
    static const Term terms[] = {
        {"h2d_pinned_gbps", &CostModel::h2d_pinned_gbps, false}, {"h2d_pageable_gbps", &CostModel::h2d_pageable_gbps, false},
        {"d2h_pinned_gbps", &CostModel::d2h_pinned_gbps, false}, {"d2h_pageable_gbps", &CostModel::d2h_pageable_gbps, false},
        {"staged_peer_gbps", &CostModel::staged_peer_gbps, false}, {"launch_us", &CostModel::launch_us, true},
        {"staged_peer_latency_us", &CostModel::staged_peer_latency_us, true},
        {"kernel_min_us", &CostModel::kernel_min_us, true},       {"copy_latency_us", &CostModel::copy_latency_us, true},
        {"api_us", &CostModel::api_us, true},                     {"sync_us", &CostModel::sync_us, true},
        {"kernel_bytes_per_thread", &CostModel::kernel_bytes_per_thread, false},
        {"malloc_us", &CostModel::malloc_us, true},               {"malloc_us_per_gib", &CostModel::malloc_us_per_gib, true},
        {"free_us", &CostModel::free_us, true},                   {"free_us_per_gib", &CostModel::free_us_per_gib, true},
        {"h2d_latency_us", &CostModel::h2d_latency_us, true},     {"d2h_latency_us", &CostModel::d2h_latency_us, true},
        {"d2d_latency_us", &CostModel::d2d_latency_us, true},     {"memset_page_us", &CostModel::memset_page_us, true},
        {"memset_latency_us", &CostModel::memset_latency_us, true}, {"copy_call_us", &CostModel::copy_call_us, true},
        {"memset_call_us", &CostModel::memset_call_us, true},     {"memset_launch_us", &CostModel::memset_launch_us, true},
        {"d2d_memcpy_call_us", &CostModel::d2d_memcpy_call_us, true}, {"copy_return_us", &CostModel::copy_return_us, true},
        {"staging_us", &CostModel::staging_us, true},             {"staging_gbps", &CostModel::staging_gbps, false},
        {"pin_alloc_us", &CostModel::pin_alloc_us, true},         {"pin_alloc_us_per_gib", &CostModel::pin_alloc_us_per_gib, true},
        {"pin_free_us", &CostModel::pin_free_us, true},           {"pin_free_us_per_gib", &CostModel::pin_free_us_per_gib, true},
        {"register_us", &CostModel::register_us, true},           {"register_us_per_gib", &CostModel::register_us_per_gib, true},
        {"unregister_us", &CostModel::unregister_us, true},       {"unregister_us_per_gib", &CostModel::unregister_us_per_gib, true}};
    std::vector<std::string> keys;
    for (const auto& term : terms) keys.emplace_back(term.key);
    fields.reject_unknown_keys(*value, "cost", keys);
    for (const auto& term : terms) {
        if (const Json* v = JsonFields::optional(*value, term.key)) {
            const std::string path = at_key("cost", term.key);
            cost.*term.field = term.may_be_zero ? fields.non_negative_number(*v, path) : fields.positive_number(*v, path);
        }
    }
    return cost;
}

// Two boards never share a PCI address or a uuid. Devices the file did not place get the next
// free bus, so that {"preset": "h200"} twice is a valid two-GPU machine.
void place_devices(const JsonFields& fields, std::vector<DeviceEntry>& entries)
{
    std::set<std::string> addresses;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        DeviceSpec& d = entries[i].spec;
        if (entries[i].pci_given) {
            for (std::size_t j = 0; j < i; ++j)
                if (pci_bus_id(entries[j].spec) == pci_bus_id(d))
                    fields.fail(at_index("devices", i), "PCI address " + pci_bus_id(d) + " is already taken by " +
                                                            at_index("devices", j) + "; give each device its own pci_bus");
        } else {
            while (addresses.count(pci_bus_id(d))) d.pci_bus = (d.pci_bus + 1) % 256;
        }
        addresses.insert(pci_bus_id(d));
    }
    for (std::size_t i = 0; i < entries.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (!entries[i].spec.uuid.empty() && entries[i].spec.uuid == entries[j].spec.uuid)
                fields.fail(at_key(at_index("devices", i), "uuid"), "the same uuid as " + at_index("devices", j) + "; every GPU has its own");
}

}  // namespace

MachineSpec load_machine_file(const std::string& path)
{
    const Json root = parse_document(path, read_whole_file(path));
    const JsonFields fields(path);
    fields.require_object(root, "");
    fields.reject_unknown_keys(root, "", kMachineKeys);

    MachineSpec machine;
    machine.source = path;
    machine.name = fields.text(fields.required(root, "", "name", "every machine file names its machine"), "name");
    if (machine.name.empty()) fields.fail("name", "expected a non-empty name");
    if (const Json* v = JsonFields::optional(root, "description")) machine.description = fields.text(*v, "description");
    if (const Json* v = JsonFields::optional(root, "has_driver")) machine.has_driver = fields.boolean(*v, "has_driver");
    machine.cost = read_cost(fields, JsonFields::optional(root, "cost"));

    const Json* devices = JsonFields::optional(root, "devices");
    if (!machine.has_driver) {
        // A machine without a driver shows no devices at all; a list here would be ignored.
        for (const char* key : {"devices", "links", "shared_host_links"})
            if (root.contains(key)) fields.fail(key, "a machine without a driver (has_driver false) has no devices; remove \"" + std::string(key) + "\"");
        return machine;
    }
    if (!devices) fields.fail("devices", "missing; list the GPUs, for example [{\"preset\": \"h200\"}]");
    fields.require_list(*devices, "devices");
    if (devices->size() > kMaxDevices)
        fields.fail("devices", "a machine has at most " + std::to_string(kMaxDevices) + " devices, got " + std::to_string(devices->size()));

    std::vector<DeviceEntry> entries;
    for (std::size_t i = 0; i < devices->size(); ++i) entries.push_back(read_device(fields, (*devices)[i], at_index("devices", i)));
    place_devices(fields, entries);
    for (auto& entry : entries) machine.devices.push_back(std::move(entry.spec));

    machine.links = read_links(fields, JsonFields::optional(root, "links"), machine.devices.size(), machine.cost.h2d_pinned_gbps);
    machine.shared_host_links = read_shared_host_links(fields, JsonFields::optional(root, "shared_host_links"),
                                                       machine.devices.size(), machine.cost.h2d_pinned_gbps);
    fill_missing_uuids(machine);
    return machine;
}

}  // namespace mgpu::sim::topology_detail
