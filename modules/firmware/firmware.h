#pragma once
/// firmware: component firmware versions from the BMC's UpdateService (FirmwareInventory and
/// SoftwareInventory), and updates through UpdateService (SimpleUpdate pull, or multipart push
/// of a local file).
///
/// Facts (modules/firmware/facts.schema.json):
///   {"components": [{"id", "name", "software_id", "version", "updateable", "link",
///                    "collection", "scope", "short_id"}...],
///    "update_service": {"simple_update": target|null, "simple_update_info": ActionInfo|null,
///                       "multipart_push": uri|null, "protocols": [...]}}
/// Members are listed as the BMC gives them (Names can repeat; Ids are not stable keys). On a
/// BMC that manages several systems (HPE Cray EX: Node0, Node1) only the node's own items and
/// the shared ones are listed (scope.h): "scope" says which; "short_id" is an Id without its
/// system prefix ("Node1.BIOS" -> "BIOS"), also on a blade with one system.
///
/// Desired state:
///   firmware: { BMC: "24.09.17", BIOS: "1.9.0" }     # by Name, SoftwareId, Id or short_id;
///                                                    # every matching member must have the version
///   firmware_images:                                 # where each component's image comes from
///     BMC: https://fw.pod-a.example/BMC-24.09.17.bin # http(s): SimpleUpdate (the BMC pulls it)
///     BIOS: file:/srv/fw/BIOS-1.9.0.bin              # file: multipart push from the plumb host
/// A name that several SoftwareInventory members share (active and backup images) is ambiguous:
/// the plan says so and apply refuses it; pin such items by Id. A pin matches the reported
/// Version when equal, or when the Version is the pin plus a vendor's build date ("2.70" is in
/// iLO's "2.70 May 16 2022"): version_match.h. Actions are ordered BMC, then BIOS, then the
/// rest; disruption firmware-flash. The SimpleUpdate request follows the action's ActionInfo
/// (simple_update.h); the outcome is decided by the task's end and words, and the inventory
/// where those say nothing or cannot be read (outcome.h).
///
/// In flight: once the BMC accepted an update with a task, Apply reports {"task", "monitor",
/// "method", "component", "wanted"} through NodeContext::in_flight before it waits. An action
/// whose params carry that object back as "in_flight" (a resumed run) follows that task to its
/// end instead of starting another update; a task gone meanwhile leaves it to the inventory.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "modules/firmware/inventory.h"
#include "modules/firmware/outcome.h"
#include "modules/module.h"
#include "modules/transport/bmc.h"

namespace plumb::modules::firmware {

class FirmwareModule : public Module {
 public:
  const ModuleInfo& Info() const override;
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  std::string BmcSummary(const Facts& facts) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// What the facts are made of.
struct FirmwareSources {
  std::vector<InventoryItem> items;
  nlohmann::json update_service;
  /// The node's system and the BMC's others (ReadSystemsView); "scope" is set only when there
  /// are others, "short_id" whenever an Id carries the system's prefix.
  std::optional<SystemsView> systems;
};

/// Pure: inventory members (+ the UpdateService resource, + the node's system view) -> facts.
Facts FirmwareFacts(const FirmwareSources& sources);

/// How ApplyFirmware waits: the task's hooks, and how long the inventory is read again when it
/// has the last word (outcome.h rule 4) before an unchanged version counts.
struct UpdateWatch {
  transport::TaskWatch task;
  std::function<void(const nlohmann::json&)> in_flight;   ///< NodeContext::in_flight
  std::chrono::milliseconds settle{std::chrono::seconds(20)};
  std::chrono::milliseconds settle_poll{std::chrono::seconds(2)};
};

/// Carries out one firmware action (the work behind FirmwareModule::Apply). A failed update,
/// or one whose end is unknown and not in the inventory, is an error (code apply.firmware).
Result<FirmwareOutcome> ApplyFirmware(transport::Bmc& bmc, const Action& action,
                                      const UpdateWatch& watch = {});

}  // namespace plumb::modules::firmware
