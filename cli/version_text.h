#pragma once
/// `plumb version`: what a bug report needs - the version, the commit it was built from, the
/// allocator and the libraries it runs with - as text or JSON. Tested in
/// tests/cli/version_text_test.cc.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plumb::cli {

struct BuildInfo {
  std::string version, commit, allocator;
  std::vector<std::pair<std::string, std::string>> libraries;   ///< name, version (as loaded)
};

/// "plumb 1.2.3\ncommit     abc\nallocator  mimalloc 2.0.9\n" then "%-10s %s\n" per library.
std::string VersionText(const BuildInfo& b);

/// {"version", "commit", "allocator", "libraries": {name: version}}.
nlohmann::json VersionJson(const BuildInfo& b);

}  // namespace plumb::cli
