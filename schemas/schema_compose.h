#pragma once
/// The stack schema (stacks/*.yaml) is composed, not written in one file: schemas/stack.base.json
/// holds what modules share (the top level; the nvidia, fabric and health groups) and each module
/// adds its own keys from its folder, modules/<m>/desired.schema.json (embedded by file layout,
/// cmake/EmbedFiles.cmake), so a new module touches no shared schema. schemas/ never includes
/// modules/: it only reads the embedded files.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/result.h"

namespace plumb::schemas {

/// One module's part: its "definitions" and "properties" (a group's members go under the
/// group: {"properties": {"nvidia": {"properties": {"cuda": ...}}}}); a "$comment" is for
/// people and is dropped.
struct SchemaFragment {
  std::string name;   ///< where it came from, for errors: "modules/cuda/desired.schema.json"
  nlohmann::ordered_json doc;
};

/// Pure: `base` with every fragment merged in, in order. A fragment may only add: a property or
/// definition the base or an earlier fragment already defines is an error "schema.compose"
/// naming the fragment and the JSON pointer (unless the fragment's entry is only
/// {"properties": {...}}, members for that group), as is any top-level key but "definitions",
/// "properties" and "$comment".
Result<nlohmann::ordered_json> ComposeSchema(nlohmann::ordered_json base,
                                             const std::vector<SchemaFragment>& fragments);

/// The embedded name of the composed stack schema, of its base, and the prefix and suffix of
/// a module's fragment ("modules/" + m + "/desired.schema.json").
inline constexpr std::string_view kStackSchemaName = "stack.schema.json";
inline constexpr std::string_view kStackBaseName = "stack.base.json";
inline constexpr std::string_view kFragmentPrefix = "modules/";
inline constexpr std::string_view kFragmentSuffix = "/desired.schema.json";

}  // namespace plumb::schemas
