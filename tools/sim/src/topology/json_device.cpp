// One entry of a machine file's "devices": a device preset with overrides, or a full
// description. Properties keep the names of DeviceSpec's fields.
#include <algorithm>
#include <string>
#include <vector>

#include "topology/json_reader.h"
#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

const std::vector<std::string>& device_keys()
{
    static const std::vector<std::string> keys = {
        "preset", "name", "uuid", "total_mem", "free_mem", "major", "minor", "sm_count", "clock_khz",
        "memory_clock_khz", "memory_bus_width", "l2_cache_size", "shared_mem_per_block",
        "shared_mem_per_block_optin", "shared_mem_per_sm", "regs_per_block", "max_threads_per_block",
        "max_threads_per_sm", "max_threads_dim", "max_grid_size", "async_engine_count", "pci_domain",
        "pci_bus", "pci_device", "memory_bandwidth_gbps", "d2d_copy_gbps"};
    return keys;
}

// Without a preset these say what the device is; everything else defaults to the H200 profile.
const std::vector<std::string>& identity_keys()
{
    static const std::vector<std::string> keys = {"name", "total_mem", "sm_count", "major", "minor"};
    return keys;
}

class DeviceReader {
public:
    DeviceReader(const JsonFields& fields, const Json& object, const std::string& path)
        : fields_(fields), object_(object), path_(path) {}

    void whole(const char* key, int& out, long long min, long long max = INT_MAX) const
    {
        if (const Json* v = JsonFields::optional(object_, key)) out = static_cast<int>(fields_.integer(*v, at_key(path_, key), min, max));
    }
    void bytes(const char* key, std::size_t& out) const
    {
        if (const Json* v = JsonFields::optional(object_, key)) out = static_cast<std::size_t>(fields_.integer(*v, at_key(path_, key), 1));
    }
    void speed(const char* key, double& out) const
    {
        if (const Json* v = JsonFields::optional(object_, key)) out = fields_.positive_number(*v, at_key(path_, key));
    }
    void triple(const char* key, int (&out)[3]) const
    {
        const Json* v = JsonFields::optional(object_, key);
        if (!v) return;
        const std::string path = at_key(path_, key);
        if (!v->is_array() || v->size() != 3)
            fields_.fail(path, "expected a list of 3 positive integers [x, y, z], got " + describe_json_value(*v));
        for (std::size_t i = 0; i < 3; ++i) out[i] = static_cast<int>(fields_.integer((*v)[i], at_index(path, i), 1, INT_MAX));
    }
    bool has(const char* key) const { return object_.contains(key); }
    std::string at(const char* key) const { return at_key(path_, key); }

private:
    const JsonFields& fields_;
    const Json& object_;
    const std::string& path_;
};

void check_consistency(const JsonFields& fields, const DeviceSpec& d, const std::string& path)
{
    auto n = [](std::size_t v) { return std::to_string(v); };
    if (d.free_mem > d.total_mem)
        fields.fail(at_key(path, "free_mem"), n(d.free_mem) + " bytes is more than total_mem (" + n(d.total_mem) + " bytes)");
    if (d.shared_mem_per_block_optin < d.shared_mem_per_block)
        fields.fail(at_key(path, "shared_mem_per_block_optin"), n(d.shared_mem_per_block_optin) +
                    " is less than shared_mem_per_block (" + n(d.shared_mem_per_block) + "); the opt-in limit is the larger one");
    if (d.shared_mem_per_sm < d.shared_mem_per_block_optin)
        fields.fail(at_key(path, "shared_mem_per_sm"), n(d.shared_mem_per_sm) +
                    " is less than shared_mem_per_block_optin (" + n(d.shared_mem_per_block_optin) + "); one block cannot use more than its SM has");
    if (d.max_threads_per_block > d.max_threads_per_sm)
        fields.fail(at_key(path, "max_threads_per_block"), std::to_string(d.max_threads_per_block) +
                    " is more than max_threads_per_sm (" + std::to_string(d.max_threads_per_sm) + "); a block runs on one SM");
    for (std::size_t i = 0; i < 3; ++i)
        if (d.max_threads_dim[i] > d.max_threads_per_block)
            fields.fail(at_index(at_key(path, "max_threads_dim"), i), std::to_string(d.max_threads_dim[i]) +
                        " is more than max_threads_per_block (" + std::to_string(d.max_threads_per_block) + ")");
}

}  // namespace

DeviceEntry read_device(const JsonFields& fields, const Json& value, const std::string& path)
{
    fields.require_object(value, path);
    fields.reject_unknown_keys(value, path, device_keys());
    const DeviceReader read(fields, value, path);

    DeviceEntry entry;
    DeviceSpec& d = entry.spec;
    if (const Json* preset = JsonFields::optional(value, "preset")) {
        d = device_preset(fields.choice(*preset, read.at("preset"), "device preset", device_preset_names()));
    } else {
        for (const auto& key : identity_keys())
            fields.required(value, path, key, "a device without \"preset\" needs " + join_names(identity_keys()));
    }

    const std::size_t preset_reserve = d.total_mem - d.free_mem;
    if (const Json* v = JsonFields::optional(value, "name")) {
        d.name = fields.text(*v, read.at("name"));
        // cudaDeviceProp::name is char[256].
        if (d.name.empty() || d.name.size() > 255) fields.fail(read.at("name"), "expected 1 to 255 characters, got " + v->dump());
    }
    if (const Json* v = JsonFields::optional(value, "uuid")) {
        d.uuid = fields.text(*v, read.at("uuid"));
        if (!is_well_formed_uuid(d.uuid))
            fields.fail(read.at("uuid"), "expected the form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hexadecimal digits), got " + v->dump());
    }
    read.bytes("total_mem", d.total_mem);
    read.whole("major", d.major, 1, 99);
    read.whole("minor", d.minor, 0, 9);
    read.whole("sm_count", d.sm_count, 1);
    read.whole("clock_khz", d.clock_khz, 1);
    read.whole("memory_clock_khz", d.memory_clock_khz, 1);
    read.whole("memory_bus_width", d.memory_bus_width, 1);
    read.whole("l2_cache_size", d.l2_cache_size, 0);
    read.bytes("shared_mem_per_block", d.shared_mem_per_block);
    read.bytes("shared_mem_per_block_optin", d.shared_mem_per_block_optin);
    read.bytes("shared_mem_per_sm", d.shared_mem_per_sm);
    read.whole("regs_per_block", d.regs_per_block, 1);
    read.whole("max_threads_per_block", d.max_threads_per_block, 1);
    read.whole("max_threads_per_sm", d.max_threads_per_sm, 1);
    read.triple("max_threads_dim", d.max_threads_dim);
    read.triple("max_grid_size", d.max_grid_size);
    read.whole("async_engine_count", d.async_engine_count, 0);
    read.whole("pci_domain", d.pci_domain, 0, 0xFFFF);
    read.whole("pci_bus", d.pci_bus, 0, 0xFF);
    read.whole("pci_device", d.pci_device, 0, 31);
    read.speed("memory_bandwidth_gbps", d.memory_bandwidth_gbps);
    read.speed("d2d_copy_gbps", d.d2d_copy_gbps);

    if (read.has("free_mem")) {
        read.bytes("free_mem", d.free_mem);
    } else if (read.has("total_mem")) {
        // The driver keeps about as much for itself as on the board the values came from,
        // but never more than half of a small device.
        const std::size_t reserve = JsonFields::optional(value, "preset") ? preset_reserve : kDriverReservedBytes;
        d.free_mem = d.total_mem - std::min(reserve, d.total_mem / 2);
    }
    entry.pci_given = read.has("pci_domain") || read.has("pci_bus") || read.has("pci_device");
    check_consistency(fields, d, path);
    return entry;
}

}  // namespace mgpu::sim::topology_detail
