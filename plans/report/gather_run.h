#pragma once
/// `plumb gather` from its parsed flags to its exit code: the cluster repo (desired-state errors
/// only warn: gather observes), the selected nodes (a shard of them), every node read over SSH
/// and its BMC over Redfish at the same time, the snapshot kept (--facts-out), the report.
/// Every side effect comes in through GatherSources, which cmd/ fills with the real transports
/// and the tests with fakes. Nothing here writes to a node.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "inventory/load.h"
#include "modules/module.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/observe/observed.h"
#include "schemas/result.h"

namespace plumb::plans::report {

/// What the command line asks of a gather.
struct GatherRequest {
  std::string limit;       ///< --limit: node patterns ("" = every node)
  std::string shard;       ///< --shard i/n ("" = all the selected nodes)
  std::string facts_out;   ///< --facts-out FILE ("" = none)
  std::string format = "text";
  int fanout = 64;
  bool no_bmc = false;
};

/// The world a gather reads, through interfaces.
struct GatherSources {
  std::function<inventory::LoadedCluster()> load;   ///< the cluster repo at the ref asked for
  std::string repo, ref;                            ///< named when the repo cannot be gathered
  std::vector<const modules::Module*> modules;
  std::function<std::unique_ptr<ShellFactory>(const inventory::Cluster&)> shells;
  /// Opens the BMCs, saying what it could not set up in the notes (empty: none are read).
  std::function<OpenBmc(const inventory::Cluster&, Diagnostics& notes)> bmc;
  ProgressObserver* progress = nullptr;
  std::function<double()> elapsed_s;   ///< seconds since the command started
};

/// The cluster a gather reads, from the repo as loaded: diagnostics that concern only the
/// desired state (stacks, rollouts, waivers, pin coherence, a node with no stack or rollout yet)
/// become warnings; any other error, or no node, is the "gather.inventory" error. Every
/// diagnostic is appended to `diags`.
Result<inventory::Cluster> ClusterToGather(inventory::LoadedCluster loaded, const std::string& repo,
                                           const std::string& ref, Diagnostics& diags);

/// The selected nodes (a shard of them with --shard) and the selection the snapshot records:
/// shards merge only with the other shards of the same selection.
struct GatherTargets {
  std::vector<const inventory::Node*> nodes;
  std::string shard;                ///< "2/4", or "" for all the selected nodes
  size_t selection_nodes = 0;
  std::string selection_digest;
};

/// `limit` and `shard` applied to `cluster`. A bad --limit is an error; a bad --shard is refused
/// (`*refused` set).
Result<GatherTargets> SelectGatherTargets(const inventory::Cluster& cluster, const std::string& limit,
                                          const std::string& shard, bool* refused);

/// The whole command: diagnostics, notes and errors on `err`, the report on `out` (--format
/// text or json); returns the "gather" exit code of schemas/exit_codes.
int RunGather(const GatherRequest& req, const GatherSources& src, std::ostream& out,
              std::ostream& err);

}  // namespace plumb::plans::report
