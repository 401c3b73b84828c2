#pragma once
/// bios: BIOS attributes through the BMC. Current values from the node's system's Bios (an
/// object-valued attribute, HPE Cray EX's {"current_value": ...}, counts by its current value:
/// attributes.h), pending ones from its settings object, found as:
///   - @Redfish.Settings.SettingsObject ("settings-object"; pending values readable);
///   - else Bios/Settings or Bios/SD, where a GET answering 405 means a PATCH-only object (AMI
///     MegaRAC's Bios/SD: "patch-only", pending values not readable);
///   - else, when the Bios has no @Redfish.Settings at all, the Bios itself ("in-place", DSP0266
///     "Settings resource": a resource without the annotation is written directly).
///
/// Facts (modules/bios/facts.schema.json):
///   {"attributes": {...current...}, "pending": {...settings values that differ from current...},
///    "settings": "/redfish/v1/Systems/1/Bios/Settings" | null, "write": "settings-object" |
///    "patch-only" | "in-place" | null, "registry": "BiosAttr..." | null,
///    "apply_times": ["OnReset", ...], "last_apply": ["Base.1.0.SettingsFailed: ..."]}
/// Desired: `bios: { Name: value, ... }`; values compared typed (a number equals the string
/// that prints the same). Apply = PATCH the settings object with only the attributes that are
/// not already pending, with @Redfish.SettingsApplyTime OnReset where supported; values are
/// checked first against the AttributeRegistry when the BMC exposes it, else against what the
/// Bios lists (names; allowable values and bounds of self-described values). Disruption: reboot.
#include <string>

#include "modules/module.h"

namespace plumb::modules::bios {

class BiosModule : public Module {
 public:
  const ModuleInfo& Info() const override;
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  std::string BmcSummary(const Facts& facts) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// Pure: checks `attrs` against an AttributeRegistry's RegistryEntries.Attributes. Returns one
/// line per violation (unknown name, read-only, wrong type, value not in the list, out of
/// bounds, too long); empty when all are valid.
std::vector<std::string> CheckAgainstRegistry(const nlohmann::json& attrs,
                                              const nlohmann::json& registry_attributes);

/// What ApplyBios did: "staged N attribute(s), applies on reset" or "already pending".
Result<std::string> ApplyBios(transport::Bmc& bmc, const Action& action);

}  // namespace plumb::modules::bios
