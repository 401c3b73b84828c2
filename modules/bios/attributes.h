#pragma once
/// BIOS attribute values as BMCs list them (pure). Most list plain values
/// (`"ProcTurboMode": "Enabled"`) described by an AttributeRegistry. HPE Cray EX lists each
/// value as an object that describes itself and ships no registry:
///   "Core Performance Boost": {"AllowableValues": ["Disabled", "Enabled"], "DataType": "string",
///                              "current_value": "Enabled", "default_value": "Enabled", ...}
/// Only the current value is the attribute's value; comparing the whole object would show every
/// pin as drift forever.
#include <nlohmann/json.hpp>

namespace plumb::modules::bios {

/// The current value of one listed attribute: the object form's current_value (or
/// CurrentValue), the value itself otherwise; null for an object without one.
nlohmann::json CurrentValue(const nlohmann::json& listed);

/// {name: current value} of a Bios resource's Attributes.
nlohmann::json CurrentValues(const nlohmann::json& attributes);

/// AttributeRegistry-style entries (AttributeName, Type, Value[].ValueName, LowerBound,
/// UpperBound) for every listed attribute, for a BIOS without a registry: an object-valued
/// attribute describes itself (AllowableValues, DataType, MinimumValue/MaximumValue); a plain
/// value gets a name-only entry (known, type unchecked). CheckAgainstRegistry takes them.
nlohmann::json ListedEntries(const nlohmann::json& attributes);

}  // namespace plumb::modules::bios
