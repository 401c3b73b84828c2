#include "modules/power/power.h"

#include <fmt/format.h>

#include "modules/bmc_util.h"
#include "modules/module_util.h"
#include "modules/transport/bmc.h"

namespace plumb::modules::power {

const ModuleInfo& PowerModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "power",
      .owns = {"/power"},
      .channel = Channel::kBmc,
      .after = {},
      .reads = "Redfish System PowerState",
      .changes = "Redfish Reset",
      .disruption = Disruption::kReboot};
  return kInfo;
}

namespace {

nlohmann::json Str(const nlohmann::json& o, const char* k) {
  return o.is_object() && o.contains(k) && o[k].is_string() ? o[k] : nlohmann::json();
}

}  // namespace

Facts PowerFactsFromSystem(const nlohmann::json& sys, const std::string& link) {
  const auto& status = sys.is_object() && sys.contains("Status") ? sys["Status"] : nlohmann::json();
  return {{"power_state", Str(sys, "PowerState")},
          {"health", Str(status, "Health")},
          {"health_rollup", Str(status, "HealthRollup")},
          {"state", Str(status, "State")},
          {"model", Str(sys, "Model")},
          {"manufacturer", Str(sys, "Manufacturer")},
          {"serial_number", Str(sys, "SerialNumber")},
          {"system", link}};
}

Result<Facts> PowerModule::ProbeBmc(transport::Bmc& bmc) const {
  std::string link;
  auto sys = GetSystem(bmc, &link);
  if (!sys.ok()) return sys.error();
  return PowerFactsFromSystem(sys.value(), link);
}


std::vector<Action> PowerModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  if (!Wants(desired) || !desired["power"].is_string()) return {};
  std::string want = desired["power"].get<std::string>();
  nlohmann::json have = facts.value("power_state", nlohmann::json());
  if (have.is_string() && have.get<std::string>() == want) return {};
  std::string is = have.is_string() ? have.get<std::string>() : "unknown";
  return {MakeAction("power", "power.state", "power", "/power", "power " + want + " (is " + is + ")",
                     have, want, Disruption::kReboot)};
}

std::string PowerModule::BmcSummary(const Facts& facts) const {
  // find, not operator[]: a const json's operator[] on a missing key is undefined behaviour.
  auto text = [&](const char* key) {
    auto it = facts.find(key);
    return it != facts.end() && it->is_string() ? it->get<std::string>() : std::string("?");
  };
  return fmt::format("power {} health {}", text("power_state"), text("health"));
}

ApplyOutcome PowerModule::Apply(NodeContext& ctx, const Action& action) const {
  if (!ctx.bmc) return ApplyOutcome::Failed(NoBmc(Name(), action.id));
  std::string link;
  auto l = ctx.bmc->SystemLink();
  if (!l.ok()) return ApplyOutcome::Failed(l.error());
  std::string want = action.after.is_string() ? action.after.get<std::string>() : "";
  if (want != "On" && want != "Off") {
    return ApplyOutcome::Failed(Diagnostic::Error("apply.power", "power must be On or Off, got '" + want + "'", {},
                             "power"));
  }
  auto r = ctx.bmc->Reset(l.value(), want == "On" ? transport::ResetKind::kOn
                                                  : transport::ResetKind::kOff);
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::power
