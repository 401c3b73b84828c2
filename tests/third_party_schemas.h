#pragma once
// Third-party schemas the report tests validate plumb's output against: the SARIF 2.1.0 JSON
// Schema and the JUnit XSD of Jenkins' xUnit plugin. They are public data files kept out of the
// project (issue 12): read from $PLUMB_THIRD_PARTY_SCHEMAS, else from ../shared/third-party-schemas/
// next to the source root (where ../shared/third-party-schemas/README.md lists their licences).
// A test that does not find one says which file and where it looked (MESSAGE) and skips that
// check; its other checks still run.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace plumb::testing {

inline std::string ThirdPartySchemasDir() {
  if (const char* dir = std::getenv("PLUMB_THIRD_PARTY_SCHEMAS"); dir != nullptr && *dir != '\0')
    return dir;
  return std::string(PLUMB_SOURCE_DIR) + "/../shared/third-party-schemas";
}

/// The path of `file` (described as `what`), or nullopt with `skip` saying what is missing where.
inline std::optional<std::string> ThirdPartySchema(const std::string& file, const std::string& what,
                                                   std::string* skip) {
  std::string path = ThirdPartySchemasDir() + "/" + file;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  *skip = "skipped: " + what + " (" + file + ") not found at " + path +
          "; put it there or set PLUMB_THIRD_PARTY_SCHEMAS to the folder holding it";
  return std::nullopt;
}

}  // namespace plumb::testing
