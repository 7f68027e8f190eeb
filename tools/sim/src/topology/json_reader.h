// Reading a machine file: typed access to JSON values that fails with the file name, the
// path of the field ("devices[1].sm_count") and what was expected instead.
#pragma once

#include <climits>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mgpu/sim/machine.h"

namespace mgpu::sim::topology_detail {

using Json = nlohmann::json;

std::string at_key(const std::string& path, const std::string& key);
std::string at_index(const std::string& path, std::size_t index);

// `"many"`, `12.5`, `a list`, `an object`, `null`: how a value is named in a message.
std::string describe_json_value(const Json& value);

class JsonFields {
public:
    explicit JsonFields(std::string file) : file_(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& problem) const;

    void require_object(const Json& value, const std::string& path) const;
    void require_list(const Json& value, const std::string& path) const;
    // Unknown keys are errors; a near miss gets a suggestion, otherwise the known keys are listed.
    void reject_unknown_keys(const Json& object, const std::string& path, const std::vector<std::string>& known) const;
    // The value under `key`, or a "missing" error that says why it is needed.
    const Json& required(const Json& object, const std::string& path, const std::string& key,
                         const std::string& why) const;
    // The value under `key`, or nullptr.
    static const Json* optional(const Json& object, const std::string& key);

    long long integer(const Json& value, const std::string& path, long long min, long long max = LLONG_MAX) const;
    double positive_number(const Json& value, const std::string& path) const;
    double non_negative_number(const Json& value, const std::string& path) const;
    bool boolean(const Json& value, const std::string& path) const;
    std::string text(const Json& value, const std::string& path) const;
    // One of `choices`, with a suggestion when the text is a near miss.
    std::string choice(const Json& value, const std::string& path, const std::string& what,
                       const std::vector<std::string>& choices) const;

    const std::string& file() const { return file_; }

private:
    std::string file_;
};

// One device entry of "devices"; `pci_given` says whether the file placed it on the bus itself.
struct DeviceEntry {
    DeviceSpec spec;
    bool pci_given = false;
};
DeviceEntry read_device(const JsonFields& fields, const Json& value, const std::string& path);

// "shared_host_links": a list of {"name", "devices", "gbps"}; gbps defaults to `default_gbps`.
std::vector<SharedHostLink> read_shared_host_links(const JsonFields& fields, const Json* value, std::size_t device_count,
                                                   double default_gbps);

// "links" in list or matrix form, over `device_count` devices; unlisted pairs are PCIe (SYS)
// without peer access. `pcie_gbps` is what a PCIe peer copy runs at unless the file says.
std::vector<std::vector<LinkSpec>> read_links(const JsonFields& fields, const Json* value, std::size_t device_count,
                                              double pcie_gbps);

}  // namespace mgpu::sim::topology_detail
