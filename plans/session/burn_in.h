#pragma once
/// `plumb acceptance`'s burn-in, before any check runs: each node's desired state at the
/// burn-in DCGM level, and the results kept in DIR/nodes/ by an earlier run at the same commit
/// and level, so an interrupted acceptance resumes where it stopped. cmd/acceptance.cc reads
/// the nodes, runs the checks over SSH and writes the report. Tested in
/// tests/plans/session/burn_in_test.cc.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/load.h"
#include "plans/observe/schedulers.h"
#include "plans/rollout/health_run.h"

namespace plumb::plans {

/// DIR/nodes/<node>.json: one node's health at one commit and level, kept as it finishes.
std::string KeptHealthPath(const std::string& dir, const std::string& node);

/// What is kept for a node that was reached (an unreachable one is not kept: it runs again).
nlohmann::json KeptHealthRecord(const NodeHealth& h, const std::string& commit, int level,
                                const std::string& checked_at);

/// The kept result of `node` in `dir` that needs no second run: for this commit and level,
/// and not failed (a node repaired since is checked again without --fresh). Else nullopt.
std::optional<NodeHealth> KeptHealth(const std::string& dir, const std::string& node,
                                     const std::string& commit, int level);

/// `desired` with DCGM at the burn-in `level` and that level's own timeout (the stack's is for
/// its own level); unchanged when it pins no DCGM.
nlohmann::json BurnInDesired(nlohmann::json desired, int level);

struct BurnInOptions {
  std::string dir;          ///< --out DIR (its nodes/ holds the kept results)
  std::string commit;       ///< the commit checked
  int level = 3;            ///< --dcgm-level
  bool reuse_kept = true;   ///< not --fresh, and a commit to key results by (no working tree)
  bool allow_busy = false;  ///< --allow-busy: load the GPUs of nodes running jobs too
};

/// The nodes to check, and those already checked. `targets` point into `desired`: keep the
/// BurnIn whole while they run.
struct BurnIn {
  std::map<std::string, nlohmann::json> desired;   ///< each target's, at the burn-in level
  std::vector<HealthTarget> targets;
  std::vector<NodeHealth> kept;
};

/// For each of `nodes` (in order) that the repo names: its kept result, or a target whose
/// GPU-loading checks are held when the schedulers show it busy (unless allow_busy).
BurnIn PlanBurnIn(const std::vector<std::string>& nodes, const inventory::LoadedCluster& loaded,
                  const SchedulerView& view, const BurnInOptions& o);

}  // namespace plumb::plans
