#pragma once
/// firmware: component firmware versions from the BMC's UpdateService.FirmwareInventory, and
/// updates through UpdateService (SimpleUpdate pull, or multipart push of a local file).
///
/// Facts (schemas/facts/firmware):
///   {"components": [{"id", "name", "software_id", "version", "updateable", "link"}...],
///    "update_service": {"simple_update": target|null, "multipart_push": uri|null,
///                       "protocols": [...]}}
/// Members are listed as the BMC gives them (Names can repeat; Ids are not stable keys).
///
/// Desired state:
///   firmware: { BMC: "24.09.17", BIOS: "1.9.0" }     # by Name, SoftwareId or Id; every
///                                                    # matching member must have the version
///   firmware_images:                                 # where each component's image comes from
///     BMC: https://fw.pod-a.example/BMC-24.09.17.bin # http(s): SimpleUpdate (the BMC pulls it)
///     BIOS: file:/srv/fw/BIOS-1.9.0.bin              # file: multipart push from the plumb host
/// Versions are compared as exact strings after trimming (Version is free-form).
/// Actions are ordered BMC, then BIOS, then the rest; disruption firmware-flash.
#include <string>
#include <vector>

#include "modules/module.h"

namespace plumb::modules::firmware {

class FirmwareModule : public Module {
 public:
  std::string_view Name() const override { return "firmware"; }
  bool HasBmcProbe() const override { return true; }
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  bool Wants(const nlohmann::json& desired) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  Status Apply(NodeContext& ctx, const Action& action) const override;
};

/// Pure: FirmwareInventory members (+ the UpdateService resource) -> facts.
Facts FirmwareFacts(const std::vector<nlohmann::json>& members,
                    const nlohmann::json& update_service);

/// What an update did. `staged`: the task finished but the inventory still shows the old
/// version: it applies on the next reset (verify after the reboot).
struct FirmwareOutcome {
  bool staged = false;
  std::string version_now;
  std::string method;                  ///< "SimpleUpdate" or "multipart"
  std::vector<std::string> messages;   ///< task / BMC messages
  std::string Describe() const;
};

/// Carries out one firmware action (the work behind FirmwareModule::Apply).
Result<FirmwareOutcome> ApplyFirmware(transport::Bmc& bmc, const Action& action);

}  // namespace plumb::modules::firmware
