#pragma once
/// bios: BIOS attributes through the BMC. Current values from Systems/{id}/Bios, pending ones
/// from its settings object (@Redfish.Settings.SettingsObject, the PATCH target).
///
/// Facts (schemas/facts/bios):
///   {"attributes": {...current...}, "pending": {...settings values that differ from current...},
///    "settings": "/redfish/v1/Systems/1/Bios/Settings" | null, "registry": "BiosAttr..." | null,
///    "apply_times": ["OnReset", ...], "last_apply": ["Base.1.0.SettingsFailed: ..."]}
/// Desired: `bios: { Name: value, ... }`; values compared typed (a number equals the string
/// that prints the same). Apply = PATCH the settings object with only the attributes that are
/// not already pending, with @Redfish.SettingsApplyTime OnReset where supported; values are
/// checked against the AttributeRegistry when the BMC exposes it. Disruption: reboot.
#include <string>

#include "modules/module.h"

namespace plumb::modules::bios {

class BiosModule : public Module {
 public:
  std::string_view Name() const override { return "bios"; }
  bool HasBmcProbe() const override { return true; }
  Result<Facts> ProbeBmc(transport::Bmc& bmc) const override;
  bool Wants(const nlohmann::json& desired) const override;
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  Status Apply(NodeContext& ctx, const Action& action) const override;
};

/// Pure: checks `attrs` against an AttributeRegistry's RegistryEntries.Attributes. Returns one
/// line per violation (unknown name, read-only, wrong type, value not in the list, out of
/// bounds, too long); empty when all are valid.
std::vector<std::string> CheckAgainstRegistry(const nlohmann::json& attrs,
                                              const nlohmann::json& registry_attributes);

/// What ApplyBios did: "staged N attribute(s), applies on reset" or "already pending".
Result<std::string> ApplyBios(transport::Bmc& bmc, const Action& action);

}  // namespace plumb::modules::bios
