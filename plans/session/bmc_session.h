#pragma once
/// `plumb bmc`'s pipeline without its transports: the BMC targets (from a --targets file or the
/// cluster repo, narrowed by --limit patterns), the TLS and credentials settings the flags leave,
/// and `bmc plan` (what the firmware, bios and power modules would change, read-only, ending
/// at the first cancel). cmd/bmc.cc parses the flags, opens the real Redfish sessions and maps
/// the outcome to an exit code. Tested in tests/plans/session/bmc_session_test.cc.
#include <chrono>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/load.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "modules/transport/bmc.h"
#include "modules/transport/redfish_client.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/schedulers.h"
#include "plans/session/apply_flags.h"
#include "schemas/exit_codes.h"
#include "schemas/result.h"

namespace plumb::plans {

/// A --targets file: "NAME URL [system=ID]" per line (further words ignored; '#' starts a
/// comment line). Each URL must be https with no user:password in it; an error names
/// `file`:line and the node.
Result<std::vector<BmcTarget>> ParseBmcTargets(std::istream& in, const std::string& file);

/// The nodes of the cluster with a `bmc:` URL (checked as above, the error at the node's
/// file:line), and each one's desired state into `desired`.
Result<std::vector<BmcTarget>> BmcTargetsOfCluster(const inventory::LoadedCluster& loaded,
                                                   std::map<std::string, nlohmann::json>& desired);

/// The targets the --limit/--node patterns name (n[1-3,5], gpu*, !n2), each once, in the
/// order of the patterns; a term that names no target is refused. No patterns: all.
Result<std::vector<BmcTarget>> SelectBmcTargets(const std::vector<BmcTarget>& targets,
                                                const std::vector<std::string>& patterns);

/// How the BMCs are reached: the repo's settings (CA path already resolved), overridden by the
/// flags; exactly one of the CA and the fingerprint applies.
struct BmcAccess {
  std::string ca, fingerprint, credentials;
};
Result<BmcAccess> ChooseBmcAccess(const BmcAccess& repo, const BmcAccess& flags);

/// Where `plumb bmc` takes its targets from, as the flags say.
struct BmcSources {
  std::string targets_file;          ///< --targets FILE ("": the cluster repo's nodes)
  std::vector<std::string> nodes;    ///< --limit/--node patterns
  std::string desired_file;          ///< --desired: this JSON for every target, not the repo's
  BmcAccess flags;                   ///< --ca, --fingerprint, --credentials
};
/// `plumb bmc`'s flags (inventory, plan, reset; `bmc apply` takes plumb apply's).
struct BmcFlags {
  std::string targets_file;
  std::vector<std::string> nodes;
  std::string ca, fingerprint, credentials, auth = "auto", desired_file, out;
  int fanout = 64;
  long per_bmc = 4;
  int timeout_s = 60;
  std::string task_timeout = "45m", power_timeout = "5m";
  std::string reset_node, reset_type = "reboot";

  BmcSources Sources() const { return {targets_file, nodes, desired_file, {ca, fingerprint, credentials}}; }
  /// --task-timeout and --power-timeout (ParseBmcWaits), the first that is no duration refused.
  Result<BmcWaits> Waits() const;
  /// --auth: "basic", "session", else auto.
  transport::BmcAuth Auth() const {
    return auth == "basic" ? transport::BmcAuth::kBasic
           : auth == "session" ? transport::BmcAuth::kSession : transport::BmcAuth::kAuto;
  }
};

/// The cluster repo as `plumb bmc` reads it: loaded, and its bmc.ca resolved to a path.
struct BmcRepo {
  inventory::LoadedCluster loaded;
  std::string ca;
};
/// The targets, each one's desired state, and how the BMCs are reached.
struct BmcSetup {
  std::vector<BmcTarget> targets;
  std::map<std::string, nlohmann::json> desired;   ///< by node
  BmcAccess access;
};
/// From the --targets file, else the repo `load_repo` reads (only then); narrowed by the
/// patterns; --desired read for every target; the access the flags leave (ChooseBmcAccess).
Result<BmcSetup> PrepareBmcSetup(const BmcSources& src, const std::function<Result<BmcRepo>()>& load_repo);


/// `bmc plan`: what each module of `modules` that a target's desired state pins would change.
struct BmcPlanOutcome {
  nlohmann::json nodes = nlohmann::json::array();   ///< {node, actions, unreadable} each
  bool changes = false;
  bool partial = false;                ///< some module could not be read
  std::vector<std::string> unread;     ///< "node (firmware, bios)": what the plan could not see
  bool cancelled = false;              ///< `cancelled` turned true: stopped there
  std::string stopped;                 ///< what was under way then ("" if between nodes)
};
struct BmcPlanHooks {
  std::function<bool()> cancelled;                 ///< Ctrl-C / SIGTERM came
  std::function<void(const std::string&)> error;   ///< a read error, once per node and text
  std::function<void(const std::string&)> change;  ///< "node: summary  [disruption]", as found
};
BmcPlanOutcome PlanBmcs(const std::vector<BmcTarget>& targets,
                        const std::map<std::string, nlohmann::json>& desired,
                        const std::vector<const modules::Module*>& modules, const OpenBmc& open,
                        const BmcPlanHooks& hooks);

/// What `bmc plan` prints once PlanBmcs has returned, not cancelled (the changes were printed as
/// found): the nodes as JSON (`json`), else "in sync", or what could not be read (never "in
/// sync" over that); and its outcome: kPartial, kChanges or kInSync.
struct BmcPlanEnd {
  std::string out;
  Outcome outcome = Outcome::kInSync;
};
BmcPlanEnd EndOfBmcPlan(const BmcPlanOutcome& p, bool json);

/// `bmc reset --type`: reboot, hard-reboot, on, off, force-off; any other is refused, and so
/// is --targets (`targets_given`: the node's scheduler is read from the cluster repo).
Result<transport::ResetKind> BmcResetKind(const std::string& type, bool targets_given);

/// `bmc apply`'s run: `plumb apply` of a plan of `modules` (the Redfish ones) only, on the nodes
/// of the --limit terms (joined; one naming no node is refused, never widened to every node).
/// --targets and --desired are refused: a change goes through the engine, from the repo's commit.
Result<ApplyFlags> BmcApplyFlagsOf(ApplyFlags a, const std::vector<std::string>& limits,
                                   const std::vector<const modules::Module*>& modules,
                                   bool targets_given, bool desired_given);

/// `bmc reset`'s rule, asked of the node's scheduler right before the reset: only a node out of
/// service (drained, or down) with no job may be power-cycled from here. Anything else is the
/// engine's (plumb apply drains, waits for the jobs, then reboots). An error says why not.
Status RefuseResetInService(modules::Drainer& scheduler, const std::string& node);

/// The same for `node` of the cluster repo `loaded`: refused when the repo does not name it;
/// asked of the scheduler its rollout policy names (made by `make`), none asked when the policy
/// names none (no scheduler runs jobs there, by the repo's own word).
Status RefuseResetOfNode(const inventory::LoadedCluster& loaded, const std::string& node,
                         const DrainerMaker& make);

}  // namespace plumb::plans
