// "shared_host_links" in a machine file: which devices reach the host through one link.
#include <set>

#include "topology/json_reader.h"

namespace mgpu::sim::topology_detail {

std::vector<SharedHostLink> read_shared_host_links(const JsonFields& fields, const Json* value, std::size_t device_count,
                                                   double default_gbps)
{
    std::vector<SharedHostLink> links;
    if (!value) return links;
    const std::string list_path = "shared_host_links";
    fields.require_list(*value, list_path);
    for (std::size_t i = 0; i < value->size(); ++i) {
        const std::string path = at_index(list_path, i);
        const Json& entry = (*value)[i];
        fields.require_object(entry, path);
        fields.reject_unknown_keys(entry, path, {"name", "devices", "gbps"});
        SharedHostLink link;
        link.name = "shared link " + std::to_string(i);
        if (const Json* name = JsonFields::optional(entry, "name")) link.name = fields.text(*name, at_key(path, "name"));
        link.gbps = default_gbps;
        if (const Json* gbps = JsonFields::optional(entry, "gbps")) link.gbps = fields.positive_number(*gbps, at_key(path, "gbps"));
        const std::string devices_path = at_key(path, "devices");
        const Json& devices = fields.required(entry, path, "devices", "list the devices that share this link, for example [0, 1]");
        fields.require_list(devices, devices_path);
        if (devices.size() < 2) fields.fail(devices_path, "a shared link needs at least two devices");
        std::set<long long> seen;
        for (std::size_t d = 0; d < devices.size(); ++d) {
            const long long device =
                fields.integer(devices[d], at_index(devices_path, d), 0, static_cast<long long>(device_count) - 1);
            if (!seen.insert(device).second)
                fields.fail(at_index(devices_path, d), "device " + std::to_string(device) + " is listed twice");
            link.devices.push_back(static_cast<int>(device));
        }
        links.push_back(std::move(link));
    }
    return links;
}

}  // namespace mgpu::sim::topology_detail
