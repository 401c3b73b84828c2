#include "inventory/file_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace plumb::inventory {

namespace fs = std::filesystem;

Result<std::optional<std::string>> DiskSource::Read(const std::string& path) const {
  fs::path p = fs::path(root_) / path;
  std::error_code ec;
  if (repo_ && fs::is_symlink(fs::symlink_status(p, ec))) {
    return Diagnostic::Error("source.not-a-file",
                             fmt::format("{} is a symlink in the working tree", path),
                             Location{path, 0, 0}, {},
                             "symlinks are not followed (nor are they in a commit); copy the file");
  }
  auto st = fs::status(p, ec);
  if (ec || st.type() == fs::file_type::not_found) return std::optional<std::string>();
  if (st.type() != fs::file_type::regular) {
    return Diagnostic::Error("source.not-a-file", fmt::format("{} is not a regular file", path),
                             Location{path, 0, 0});
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    return Diagnostic::Error("source.read", fmt::format("cannot read {}", p.string()),
                             Location{path, 0, 0});
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return std::optional<std::string>(ss.str());
}

Result<std::vector<std::string>> DiskSource::List(const std::string& dir) const {
  std::vector<std::string> names;
  std::error_code ec;
  fs::path p = fs::path(root_) / dir;
  if (!fs::is_directory(p, ec)) return names;
  for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) names.push_back(it->path().filename().string());
  }
  if (ec) {
    return Diagnostic::Error("source.read", fmt::format("cannot list {}: {}", dir, ec.message()),
                             Location{dir, 0, 0});
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::optional<std::string>> MemorySource::Read(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::vector<std::string>> MemorySource::List(const std::string& dir) const {
  std::vector<std::string> names;
  std::string prefix = dir + "/";
  for (const auto& [path, _] : files_) {
    if (path.compare(0, prefix.size(), prefix) == 0 &&
        path.find('/', prefix.size()) == std::string::npos) {
      names.push_back(path.substr(prefix.size()));
    }
  }
  return names;
}

}  // namespace plumb::inventory
