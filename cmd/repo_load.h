#pragma once
/// The one way cmd/ loads a cluster repo: inventory's loader, told by the module registry which
/// desired keys some module checks (a pin nothing checks is an error, with its file:line).
#include <string>

#include "inventory/load.h"

namespace plumb::cmd {

inventory::LoadOptions RepoLoadOptions(std::string repo, std::string ref, bool working_tree);
inventory::LoadedCluster LoadRepo(std::string repo, std::string ref, bool working_tree);

/// A path the cluster repo names (a CA file, known_hosts): relative ones are the repo's.
std::string RepoPath(const std::string& repo, const std::string& path);

}  // namespace plumb::cmd
