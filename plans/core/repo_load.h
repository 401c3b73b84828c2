#pragma once
/// The one way a command loads a cluster repo: inventory's loader, told by the module registry
/// which desired keys some module checks (a pin nothing checks is an error, with its file:line).
#include <string>

#include "inventory/load.h"

namespace plumb::plans {

inventory::LoadOptions RepoLoadOptions(std::string repo, std::string ref, bool working_tree);
inventory::LoadedCluster LoadRepo(std::string repo, std::string ref, bool working_tree);

/// The one-line summary after a failed load's diagnostics (which the caller prints first): the
/// repo could not be read at all (a bad --ref, no repository: `plumb validate` would say the
/// same, so no hint to run it) or it was read and is invalid (N errors, validate says where).
Diagnostic RepoLoadFailure(const inventory::LoadedCluster& lc, const std::string& repo,
                           const std::string& ref, bool working_tree);

/// The cluster repo a command reads when --repo is the default ".": like git, the nearest of
/// ".", its parent, its parent's parent... that holds a ".git"; "." when none does (the load
/// then says "not a git repository"). An explicit --repo elsewhere is taken as given.
std::string DiscoverRepo(const std::string& start);

/// A path the cluster repo names (a CA file, known_hosts): relative ones are the repo's.
std::string RepoPath(const std::string& repo, const std::string& path);

}  // namespace plumb::plans
