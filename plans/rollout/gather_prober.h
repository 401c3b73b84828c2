#pragma once
/// The engine's re-probe (verify, the stale check) made of gather's own reads: one node over its
/// shell with the same in-band modules gather uses, so digests compare, and its BMC for the
/// Redfish modules (firmware, bios, power) its desired state pins, as plan does: verify of a
/// firmware or BIOS change reads the BMC. The digest stays the in-band one
/// (plans/observe/bmc_gather.h says why). The shells and BMCs come from the caller (cmd builds
/// the real ones; tests give fakes).
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inventory/model.h"
#include "modules/module.h"
#include "plans/observe/bmc_gather.h"
#include "plans/observe/gather.h"
#include "plans/rollout/rollout.h"

namespace plumb::plans {

/// NodeObservation -> the planner's NodeFacts (digest carried over). A module read in part
/// counts as an error: apply never acts on half a view.
NodeFacts ToFacts(const NodeObservation& o);

class GatherProber final : public Prober {
 public:
  /// `desired` (each node's desired state) picks the Redfish modules to read; without it, or
  /// without `open_bmc`, only the shell is read.
  GatherProber(const inventory::Cluster& cluster, ShellFactory& shells,
               std::vector<const modules::Module*> modules, std::chrono::milliseconds timeout,
               OpenBmc open_bmc = {}, const std::map<std::string, nlohmann::json>* desired = nullptr)
      : cluster_(cluster), shells_(shells), modules_(std::move(modules)), timeout_(timeout),
        open_bmc_(std::move(open_bmc)), desired_(desired) {}
  NodeFacts Probe(const std::string& node) override;

 private:
  const inventory::Cluster& cluster_;
  ShellFactory& shells_;
  std::vector<const modules::Module*> modules_;
  std::chrono::milliseconds timeout_;
  OpenBmc open_bmc_;
  const std::map<std::string, nlohmann::json>* desired_;
};

}  // namespace plumb::plans
