#include "cli/schema_files.h"

#include <filesystem>

namespace plumb::cli {

std::string EmbeddedFileList(const std::vector<schemas::EmbeddedFile>& files) {
  std::string out;
  for (const auto& f : files) out += std::string(f.name) + "\n";
  return out;
}

Status WriteEmbeddedFiles(const std::vector<schemas::EmbeddedFile>& files, const std::string& dir,
                          const WriteFile& write,
                          const std::function<void(const std::string& path)>& wrote) {
  namespace fs = std::filesystem;
  for (const auto& f : files) {
    fs::path p = fs::path(dir) / std::string(f.name);
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    if (ec) return Diagnostic::Error("output.write", "cannot create " + p.parent_path().string());
    if (Status st = write(p.string(), std::string(f.contents)); !st) return st;
    wrote(p.string());
  }
  return OkStatus();
}

}  // namespace plumb::cli
