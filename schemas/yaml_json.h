#pragma once
/// YAML -> JSON with locations. valijson's yaml-cpp adapter does not build against Debian's
/// yaml-cpp, so plumb converts each YAML file to JSON, validates the JSON, and maps every error
/// back to the YAML through the pointer -> Mark tables built here.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "schemas/diagnostics.h"

namespace plumb::schemas {

/// Where each value (and each mapping key) of one document was written. Keys are JSON pointers.
struct Marks {
  std::map<std::string, Location> value;  ///< pointer -> first character of the value
  std::map<std::string, Location> key;    ///< pointer of a mapping entry -> its key
  /// pointer -> the text as written, for plain scalars read as numbers or booleans (so a hint
  /// can say `quote it: "12.10"` rather than the float 12.1).
  std::map<std::string, std::string> scalar_text;

  /// The value's location, else the nearest enclosing value's (never empty once parsed).
  Location At(const std::string& pointer) const;
  /// The key's location for a mapping entry, else At(pointer).
  Location KeyAt(const std::string& pointer) const;
};

struct YamlDocument {
  std::string file;
  nlohmann::json json;   ///< null for an empty file
  Marks marks;
  bool unreadable = false;   ///< a stand-in for a file that did not read or parse (reported)
};

/// Parses `text` (named `file` in diagnostics). Scalars follow YAML 1.2's core schema: quoted
/// scalars are strings; plain ones are null (~, null, empty), bool (true/false), integer, float,
/// or else string — so `cuda: 12.4` is a number and a version must be quoted or have two dots.
/// Problems are added to `diags`: a syntax error (returns nullopt), duplicate keys in a mapping
/// and non-scalar keys (the document is still returned, first value kept).
std::optional<YamlDocument> ParseYaml(std::string_view text, const std::string& file,
                                      Diagnostics& diags);

}  // namespace plumb::schemas
