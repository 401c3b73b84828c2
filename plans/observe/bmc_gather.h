#pragma once
/// Redfish-only gather: firmware, BIOS and power facts of every node with a BMC, straight from
/// the BMCs, so it works when a node's OS is down. Fan-out: `fanout` nodes at once, all their
/// requests multiplexed on one libcurl multi handle (transport/curl_http_client.h), at most
/// `per_bmc_connections` connections to any one BMC. One session per BMC, always logged out.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/module.h"
#include "inventory/model.h"
#include "modules/transport/bmc.h"
#include "plans/observe/gather.h"
#include "plans/observe/observed.h"
#include "schemas/result.h"

namespace plumb::plans {

struct BmcTarget {
  std::string node;
  std::string url;      ///< https://...
  std::string system;   ///< the node's ComputerSystem Id on a shared BMC (bmc_system), or ""
};

/// Opens one node's BMC session (the real one: cmd/bmc_factory.h; tests: fakes).
using OpenBmc = std::function<std::unique_ptr<transport::Bmc>(const BmcTarget&)>;

struct BmcObservation {
  std::string node;
  std::string url;
  bool reachable = false;   ///< the service root answered
  Diagnostic error;         ///< why not, when !reachable
  std::map<std::string, Result<modules::Facts>> facts;   ///< by module name
  double elapsed_s = 0;
};

/// Gathers every `modules` entry that HasBmcProbe() from each target; `fanout` targets at once.
/// Results in target order. Never throws.
std::vector<BmcObservation> GatherBmc(const std::vector<BmcTarget>& targets,
                                      const std::vector<const modules::Module*>& modules,
                                      int fanout, const OpenBmc& open);

/// The nodes of `nodes` that have a BMC, as targets.
std::vector<BmcTarget> BmcTargetsOf(const std::vector<const inventory::Node*>& nodes);

/// Puts each BMC's facts into its node's in-band observation, for the nodes read over SSH. A
/// BMC that could not be reached gives every BMC module of its node that reason as an error, so
/// a plan leaves those modules out on that node rather than guessing. The facts digest stays
/// the in-band one: apply's stale check re-probes over SSH only, so a digest over Redfish facts
/// too would mark every node with a BMC stale (firmware and BIOS changes are re-checked by their
/// own modules just before they act).
void MergeBmcObservations(std::vector<BmcObservation>&& bmc,
                          const std::vector<const modules::Module*>& bmc_modules,
                          ObservedState& observed);

/// {"node", "bmc", "reachable", "error"?, "facts": {module: facts}, "errors": {module: diag},
///  "elapsed_s"}
nlohmann::json ToJson(const BmcObservation& o);

/// What `plumb gather`, `plan` and `drift` read: every node over SSH (the in-band probes of
/// `modules`) and, at the same time, the BMC of every node that names one (the BMC modules of
/// `modules`; none when `open` is empty), each side `options.fanout` wide; then
/// MergeBmcObservations. The facts digest stays the in-band one.
ObservedState GatherWithBmc(const std::vector<const inventory::Node*>& nodes,
                            const std::vector<const modules::Module*>& modules,
                            ShellFactory& shells, const GatherOptions& options,
                            ProgressObserver* progress, const OpenBmc& open);

/// For a recorded snapshot: BMC facts it does not have were never read. A node with a BMC
/// (`nodes`: the inventory's) whose observation has neither facts nor an error from a BMC
/// module (gathered without reading BMCs: an older plumb, --no-bmc, no credentials) gets that
/// module's error "facts.bmc-unread", so a plan or drift leaves the node out as unreadable when
/// it pins one of those keys, instead of calling keys in sync that nothing read. The facts
/// digest is kept as recorded (computed first when the snapshot has none).
class UnreadBmcFacts {
 public:
  UnreadBmcFacts(const std::vector<const inventory::Node*>& nodes,
                 const std::vector<const modules::Module*>& bmc_modules);
  void Mark(NodeObservation& n) const;

 private:
  std::set<std::string, std::less<>> with_bmc_;
  std::vector<const modules::Module*> modules_;
};

}  // namespace plumb::plans
