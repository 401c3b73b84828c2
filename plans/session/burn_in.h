#pragma once
/// `plumb acceptance`'s burn-in, before any check runs: each node's desired state at the
/// burn-in DCGM level, and the results kept in DIR/nodes/ by an earlier run at the same commit
/// and level, so an interrupted acceptance resumes where it stopped. cmd/acceptance.cc reads
/// the nodes, runs the checks over SSH and writes the report. Tested in
/// tests/plans/session/burn_in_test.cc.
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/load.h"
#include "plans/observe/schedulers.h"
#include "plans/report/acceptance_outcome.h"
#include "plans/rollout/health_run.h"
#include "plans/store/run_who.h"
#include "schemas/result.h"

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

/// Acceptance's flags checked and its directory made (DIR/nodes): nullopt when ready, else
/// what to say and the outcome - kRefused for no --out or a value out of range (--dcgm-level
/// 1-4; --timeout and --health-fanout at least 1), kError when the directory cannot be made.
std::optional<report::AcceptanceSaid> PrepareBurnInDir(const std::string& dir, int level,
                                                       int timeout_s, int fanout);

/// Who runs the acceptance, for its report: `given` (--operator), else $SUDO_USER, $USER or
/// $LOGNAME from `env`, else "unknown".
std::string OperatorName(const std::string& given, const EnvLookup& env);

/// Where the burn-in's run writes and what it says (cmd/: files, stderr, the clock).
struct BurnInIo {
  std::function<Status(const std::string& path, const std::string& text)> write;
  std::function<void(const std::string& line)> say;   ///< progress and warnings, one line each
  std::function<std::string()> now;                    ///< RFC 3339, when a result is kept
};

/// The health checks of `burn`'s targets, `fanout` nodes at once over `shells`, each node's
/// within `timeout`: the kept results first (said, with --fresh to run them again), then each
/// target's in order. Each node reached is kept in o.dir's nodes/ as it finishes, so an
/// interrupted acceptance resumes there; an unreachable one runs again next time.
std::vector<NodeHealth> RunBurnIn(BurnIn& burn, const BurnInOptions& o, ShellFactory& shells,
                                  const std::vector<const modules::Module*>& modules, int fanout,
                                  std::chrono::seconds timeout, const BurnInIo& io);

}  // namespace plumb::plans
