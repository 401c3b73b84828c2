// Loading the cluster repo (plans/core/repo_load.h).
#include "plans/core/repo_load.h"

#include <filesystem>

#include <fmt/format.h>

#include "modules/registry.h"

namespace plumb::plans {

inventory::LoadOptions RepoLoadOptions(std::string repo, std::string ref, bool working_tree) {
  inventory::LoadOptions o;
  o.repo = std::move(repo);
  o.ref = std::move(ref);
  o.working_tree = working_tree;
  o.is_checked = [](std::string_view pointer) { return modules::OwnerOf(pointer) != nullptr; };
  return o;
}

inventory::LoadedCluster LoadRepo(std::string repo, std::string ref, bool working_tree) {
  return inventory::LoadCluster(RepoLoadOptions(std::move(repo), std::move(ref), working_tree));
}

Diagnostic RepoLoadFailure(const inventory::LoadedCluster& lc, const std::string& repo,
                           const std::string& ref, bool working_tree) {
  const std::string where = working_tree ? repo + " (working tree)" : repo + " at " + ref;
  for (const Diagnostic& d : lc.diags.items())
    if (d.severity == Severity::kError && d.code.rfind("source.", 0) == 0)
      return Diagnostic::Error("repo.unreadable", fmt::format("cannot read the cluster repo {}", where));
  const size_t n = lc.diags.ErrorCount();
  return Diagnostic::Error(
      "repo.invalid",
      fmt::format("the cluster repo {} is invalid ({} error{})", where, n, n == 1 ? "" : "s"),
      {}, {}, "fix them and commit; `plumb validate` lists every file:line");
}

std::string DiscoverRepo(const std::string& start) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(fs::path(start) / ".git", ec)) return start;
  fs::path dir = fs::absolute(start, ec);
  if (ec) return start;
  for (fs::path p = dir.parent_path(); !p.empty(); p = p.parent_path()) {
    if (fs::exists(p / ".git", ec)) return p.string();
    if (p == p.root_path()) break;
  }
  return start;
}

std::string RepoPath(const std::string& repo, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return repo + "/" + path;
}

}  // namespace plumb::plans
