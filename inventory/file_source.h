#pragma once
/// Where the loader reads the cluster repo's files from: a git tree at one commit (GitTreeSource,
/// inventory/git_source.h), the working tree on disk, or memory (tests). Paths are relative to
/// the repo root with '/' separators ("stacks/h100.yaml").
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schemas/result.h"

namespace plumb::inventory {

class FileSource {
 public:
  virtual ~FileSource() = default;
  /// The contents of `path`; nullopt when no such file exists; an error when it exists but
  /// cannot be read (a directory, a symlink in git, an I/O error).
  virtual Result<std::optional<std::string>> Read(const std::string& path) const = 0;
  /// The names (not paths) of the regular files directly inside `dir`, sorted; empty when the
  /// directory does not exist.
  virtual Result<std::vector<std::string>> List(const std::string& dir) const = 0;
};

/// Files on disk below `root` (working-tree mode: uncommitted edits included).
class DiskSource : public FileSource {
 public:
  /// `repo`: the root is a cluster repo's working tree, read as a commit would be: a symlink
  /// is refused (it could point anywhere: /etc/passwd), not followed.
  explicit DiskSource(std::string root, bool repo = false)
      : root_(std::move(root)), repo_(repo) {}
  Result<std::optional<std::string>> Read(const std::string& path) const override;
  Result<std::vector<std::string>> List(const std::string& dir) const override;

 private:
  std::string root_;
  bool repo_ = false;
};

/// Files held in memory: path -> contents. For tests and for callers that build a repo in code.
class MemorySource : public FileSource {
 public:
  MemorySource() = default;
  explicit MemorySource(std::map<std::string, std::string> files) : files_(std::move(files)) {}
  void Set(const std::string& path, std::string contents) { files_[path] = std::move(contents); }
  Result<std::optional<std::string>> Read(const std::string& path) const override;
  Result<std::vector<std::string>> List(const std::string& dir) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace plumb::inventory
