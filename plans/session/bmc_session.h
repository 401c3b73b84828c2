#pragma once
/// `plumb bmc`'s pipeline without its transports: the BMC targets (from a --targets file or the
/// cluster repo, narrowed by --limit patterns), the TLS and credentials settings the flags leave,
/// and `bmc plan` (what the firmware, bios and power modules would change, read-only, ending
/// at the first cancel). cmd/bmc.cc parses the flags, opens the real Redfish sessions and maps
/// the outcome to an exit code. Tested in tests/plans/session/bmc_session_test.cc.
#include <functional>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/load.h"
#include "modules/drain/drainer.h"
#include "modules/module.h"
#include "plans/observe/bmc_gather.h"
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

/// `bmc reset`'s rule, asked of the node's scheduler right before the reset: only a node out of
/// service (drained, or down) with no job may be power-cycled from here. Anything else is the
/// engine's (plumb apply drains, waits for the jobs, then reboots). An error says why not.
Status RefuseResetInService(modules::Drainer& scheduler, const std::string& node);

}  // namespace plumb::plans
