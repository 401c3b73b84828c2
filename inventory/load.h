#pragma once
/// The public entry point of inventory/: a cluster repo at a git ref -> the validated model and
/// every node's merged desired state, with all problems collected as located diagnostics.
///
/// Steps (each collects diagnostics and goes on, so one run reports everything):
///   1. read inventory.yaml, stacks/*.yaml, rollouts/*.yaml, waivers.yaml at the commit
///      (or from disk in working-tree mode, with a warning);
///   2. YAML -> JSON with locations; JSON Schema validation (schemas/*.schema.json);
///   3. typed model; semantic checks (duplicates, unknown groups/stacks/rollouts, cycles,
///      nodes without a stack);
///   4. per-node merge (inventory/resolve.h);
///   5. pin coherence (schemas/rules/compat.yaml, inventory/coherence.h).
///
/// Diagnostic codes (stable; callers may filter on them):
///   source.*     where the files come from: not-a-repo, empty-repo, unknown-ref, ambiguous-ref,
///                missing-inventory, not-a-file, too-large, read, git; working-tree (a warning)
///   yaml.*       syntax, duplicate-key, bad-key, too-deep, too-large
///   schema.*     unknown-key, bad-key, type, pattern, enum, required, length, range, invalid
///   inventory.*  duplicate-name, duplicate-address, duplicate-bmc, unknown-group,
///                unknown-stack, unknown-rollout, group-cycle, no-stack, duplicate-stack
///   rollout.*    unknown-domain; domain-missing (a warning)
///   waivers.*    bad-date; expired, no-match (warnings)
///   coherence.*  one per rule id (cuda-driver, fabricmanager-driver, nccl-cuda-major);
///                unknown-version (a warning)
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "inventory/file_source.h"
#include "inventory/model.h"
#include "schemas/diagnostics.h"
#include "schemas/result.h"

namespace plumb::inventory {

struct LoadOptions {
  std::string repo = ".";
  std::string ref = "HEAD";
  bool working_tree = false;  ///< read files from disk (uncommitted edits); never for apply
  /// Whether a desired-state pointer is checked by some module (the registry's answer; cmd/
  /// passes it, inventory/ cannot see modules). Set: a pinned key it refuses is an error
  /// ("inventory.unchecked-key"). Empty: not checked.
  std::function<bool(std::string_view pointer)> is_checked;
};

struct LoadedCluster {
  Cluster cluster;
  /// By node name, for every named node (when there are errors, `stack` may be empty).
  std::map<std::string, NodeDesired> desired;
  Diagnostics diags;                           ///< errors and warnings, sorted by location
  /// The files the model was read from (the commit's tree, or the disk in working-tree mode),
  /// for files the inventory names (known_hosts, CA bundles): read them with ReadRepoFile.
  std::shared_ptr<const FileSource> files;
  bool ok() const { return !diags.HasErrors(); }
};

/// A file named in the inventory (defaults.ssh.known_hosts, defaults.bmc.ca, ...): an absolute
/// path is read from the local disk; a relative one from the cluster repo at the loaded commit
/// (so `--ref v1` uses v1's known_hosts). Errors: "source.missing-file" (hint names the key),
/// or the source's read error.
Result<std::string> ReadRepoFile(const LoadedCluster& loaded, const std::string& path,
                                 const std::string& key = {});

/// Loads, validates and resolves the cluster repo. Never throws; every problem is in `diags`.
LoadedCluster LoadCluster(const LoadOptions& options);

/// The same over any file source (tests use MemorySource); `source` is recorded as given.
LoadedCluster LoadClusterFrom(const FileSource& files, const Source& source);

/// The full SHA `ref` names in `repo` (see GitTreeSource::Open for the errors).
Result<std::string> ResolveCommit(const std::string& repo, const std::string& ref);

}  // namespace plumb::inventory
