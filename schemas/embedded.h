#pragma once
/// Files compiled into the binary: every schemas/**/*.json and schemas/**/*.yaml (JSON Schemas,
/// the compatibility table), so plumb never needs its source tree at run time. The .cc is
/// generated at build time by cmake/EmbedFiles.cmake.
#include <optional>
#include <string_view>
#include <vector>

namespace plumb::schemas {

struct EmbeddedFile {
  std::string_view name;      ///< path relative to schemas/: "stack.schema.json", "rules/compat.yaml"
  std::string_view contents;  ///< the file, byte for byte
};

/// All embedded files, sorted by name.
const std::vector<EmbeddedFile>& EmbeddedFiles();

/// The contents of the embedded file `name`, or nullopt when there is none.
std::optional<std::string_view> FindEmbedded(std::string_view name);

}  // namespace plumb::schemas
