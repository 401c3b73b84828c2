#include "cmd/repo_load.h"

#include "modules/registry.h"

namespace plumb::cmd {

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

std::string RepoPath(const std::string& repo, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return repo + "/" + path;
}

}  // namespace plumb::cmd
