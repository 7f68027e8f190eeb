// Typed access to the values of a machine file, with messages that name the field.
#include <cmath>
#include <string>
#include <vector>

#include "topology/json_reader.h"
#include "topology/topology_detail.h"

namespace mgpu::sim::topology_detail {
namespace {

// How an integer rule reads in a message: "a positive integer", "an integer from 0 to 255".
std::string integer_rule(long long min, long long max)
{
    if (max >= INT_MAX) {
        if (min == 1) return "a positive integer";
        if (min == 0) return "a non-negative integer";
        return "an integer of at least " + std::to_string(min);
    }
    return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// Whole numbers written with a fraction or an exponent (8e9) are accepted as integers.
bool as_whole_number(const Json& value, long long& out)
{
    if (value.is_number_unsigned()) {
        const auto u = value.get<unsigned long long>();
        if (u > static_cast<unsigned long long>(LLONG_MAX)) return false;
        out = static_cast<long long>(u);
        return true;
    }
    if (value.is_number_integer()) {
        out = value.get<long long>();
        return true;
    }
    if (value.is_number_float()) {
        const double d = value.get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9007199254740992.0) return false;
        out = static_cast<long long>(d);
        return true;
    }
    return false;
}

}  // namespace

std::string at_key(const std::string& path, const std::string& key)
{
    return path.empty() ? key : path + "." + key;
}

std::string at_index(const std::string& path, std::size_t index)
{
    return path + "[" + std::to_string(index) + "]";
}

std::string describe_json_value(const Json& value)
{
    if (value.is_object()) return "an object";
    if (value.is_array()) return value.empty() ? "an empty list" : "a list";
    return value.dump();
}

void JsonFields::fail(const std::string& path, const std::string& problem) const
{
    throw TopologyError(file_ + ": " + (path.empty() ? "" : path + ": ") + problem);
}

void JsonFields::require_object(const Json& value, const std::string& path) const
{
    if (!value.is_object()) fail(path, "expected an object {...}, got " + describe_json_value(value));
}

void JsonFields::require_list(const Json& value, const std::string& path) const
{
    if (!value.is_array()) fail(path, "expected a list [...], got " + describe_json_value(value));
}

void JsonFields::reject_unknown_keys(const Json& object, const std::string& path,
                                     const std::vector<std::string>& known) const
{
    for (const auto& item : object.items()) {
        bool is_known = false;
        for (const auto& key : known) is_known = is_known || key == item.key();
        if (is_known) continue;
        std::string problem = "unknown key \"" + item.key() + "\"";
        if (auto near = closest_match(item.key(), known))
            problem += " (did you mean \"" + *near + "\"?)";
        else
            problem += "; the keys allowed here are " + join_names(known);
        fail(at_key(path, item.key()), problem);
    }
}

const Json& JsonFields::required(const Json& object, const std::string& path, const std::string& key,
                                 const std::string& why) const
{
    auto found = object.find(key);
    if (found == object.end()) fail(at_key(path, key), "missing; " + why);
    return *found;
}

const Json* JsonFields::optional(const Json& object, const std::string& key)
{
    auto found = object.find(key);
    return found == object.end() ? nullptr : &*found;
}

long long JsonFields::integer(const Json& value, const std::string& path, long long min, long long max) const
{
    long long number = 0;
    if (!as_whole_number(value, number)) fail(path, "expected " + integer_rule(min, max) + ", got " + describe_json_value(value));
    if (number < min || number > max) {
        std::string rule = integer_rule(min, max);
        if (number > max && max >= INT_MAX) rule += " no larger than " + std::to_string(max);
        fail(path, "expected " + rule + ", got " + describe_json_value(value));
    }
    return number;
}

double JsonFields::positive_number(const Json& value, const std::string& path) const
{
    if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
        fail(path, "expected a positive number, got " + describe_json_value(value));
    return value.get<double>();
}

double JsonFields::non_negative_number(const Json& value, const std::string& path) const
{
    if (!value.is_number() || !(value.get<double>() >= 0) || !std::isfinite(value.get<double>()))
        fail(path, "expected a number of at least 0, got " + describe_json_value(value));
    return value.get<double>();
}

bool JsonFields::boolean(const Json& value, const std::string& path) const
{
    if (!value.is_boolean()) fail(path, "expected true or false, got " + describe_json_value(value));
    return value.get<bool>();
}

std::string JsonFields::text(const Json& value, const std::string& path) const
{
    if (!value.is_string()) fail(path, "expected a string in double quotes, got " + describe_json_value(value));
    return value.get<std::string>();
}

std::string JsonFields::choice(const Json& value, const std::string& path, const std::string& what,
                               const std::vector<std::string>& choices) const
{
    const std::string given = text(value, path);
    for (const auto& c : choices)
        if (c == given) return given;
    std::string problem = "unknown " + what + " \"" + given + "\"";
    if (auto near = closest_match(given, choices)) problem += " (did you mean \"" + *near + "\"?)";
    problem += "; use " + join_names(choices, " or ");
    fail(path, problem);
}

}  // namespace mgpu::sim::topology_detail
