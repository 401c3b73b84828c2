#pragma once
/// Validation of user files against the embedded JSON Schemas (schemas/*.schema.json).
/// valijson checks values (types, patterns, enums, ranges, required keys); plumb's own pass checks
/// keys (unknown keys with "did you mean", key patterns), because valijson reports only the first
/// unknown key of an object and nothing at all for a bad property name. Every error is reported,
/// located at the YAML's file:line:column, with the key path and a hint in the user's terms.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "schemas/diagnostics.h"
#include "schemas/yaml_json.h"

namespace plumb::schemas {

/// Validates `doc` against the embedded schema `schema_name` ("stack.schema.json"), adding one
/// Diagnostic per problem to `diags` (codes "schema.*"). Returns true when `doc` is valid.
/// Never throws; a schema that cannot be loaded is itself an error diagnostic.
bool ValidateDocument(const YamlDocument& doc, std::string_view schema_name, Diagnostics& diags);

/// The same, for a JSON value that was not read from a file (`file` names it in diagnostics).
bool ValidateJson(const nlohmann::json& value, std::string_view schema_name,
                  const std::string& file, const Marks& marks, Diagnostics& diags);

/// The parsed embedded schema `name`, or nullptr if there is none (or it is not valid JSON).
const nlohmann::json* SchemaJson(std::string_view name);

}  // namespace plumb::schemas
