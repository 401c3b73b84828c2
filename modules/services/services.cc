#include "modules/services/services.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/module_util.h"
#include "modules/parse_util.h"
#include "modules/services/parse.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::services {

const ModuleInfo& ServicesModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "services",
      .owns = {"/services"},
      .channel = Channel::kInBand,
      .after = {"packages", "nvidia_driver", "kernel_modules", "sysctl"},
      .reads = "`systemctl list-unit-files`, `list-units`",
      .changes = "`systemctl enable/disable/start/stop`",
      .disruption = Disruption::kServiceRestart,
      .disruption_by_key = {{"/services/*/enabled", Disruption::kNone}}};
  return kInfo;
}

namespace {

bool IsEnabledState(const std::string& s) {
  return s == "enabled" || s == "enabled-runtime" || s == "alias" || s == "static";
}

bool SafeUnit(std::string_view u) {
  if (u.empty() || u.size() > 256 || u[0] == '-') return false;
  for (char c : u)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '-' || c == '_' || c == '.' || c == '@' || c == ':' || c == '\\'))
      return false;
  return true;
}

}  // namespace

std::string UnitName(std::string_view name) {
  for (std::string_view suffix : {".service", ".socket", ".timer", ".target", ".mount", ".path"})
    if (EndsWith(name, suffix)) return std::string(name);
  return std::string(name) + ".service";
}

std::string ServicesModule::ProbeScript() const {
  return "plumb_run unit_files systemctl list-unit-files --type=service --no-legend --no-pager\n"
         "plumb_run units systemctl list-units --type=service --all --no-legend --no-pager --plain";
}

Result<Facts> ServicesModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return Facts(FactsFromParts(*parts));
}


std::vector<Action> ServicesModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  for (const auto& [name, want] : desired["services"].items()) {
    if (!want.is_object()) continue;
    std::string unit = UnitName(name);
    const auto* have = Lookup(facts, {"units", unit});
    std::string enabled = have ? StringField(*have, "enabled") : "";
    std::string active = have ? StringField(*have, "active") : "";
    std::string ptr = "/services/" + schemas::PointerToken(name);
    if (auto e = want.find("enabled"); e != want.end() && e->is_boolean()) {
      bool w = e->get<bool>();
      if (enabled.empty() ? w : IsEnabledState(enabled) != w)
        actions.push_back(MakeAction(
            Name(), fmt::format("services.{}.enabled", name), fmt::format("services.{}.enabled", name),
            ptr + "/enabled",
            fmt::format("{} {} (unit file {})", w ? "enable" : "disable", unit,
                        enabled.empty() ? "not found" : enabled),
            enabled.empty() ? nlohmann::json() : nlohmann::json(enabled), w, Disruption::kNone,
            {{"unit", unit}}));
    }
    if (auto a = want.find("active"); a != want.end() && a->is_boolean()) {
      bool w = a->get<bool>();
      if ((active == "active") != w)
        actions.push_back(MakeAction(
            Name(), fmt::format("services.{}.active", name), fmt::format("services.{}.active", name),
            ptr + "/active",
            fmt::format("{} {} (now {})", w ? "start" : "stop", unit,
                        active.empty() ? "not found" : active),
            active.empty() ? nlohmann::json() : nlohmann::json(active), w,
            Disruption::kServiceRestart, {{"unit", unit}}));
    }
  }
  return actions;
}

ApplyOutcome ServicesModule::Apply(NodeContext& ctx, const Action& action) const {
  std::string unit = action.params.value("unit", "");
  if (!SafeUnit(unit) || !action.after.is_boolean())
    return ApplyOutcome::Failed(Diagnostic::Error("apply.services", fmt::format("bad unit name '{}'", unit)));
  bool want = action.after.get<bool>();
  std::string verb;
  if (EndsWith(action.id, ".enabled")) verb = want ? "enable" : "disable";
  else if (EndsWith(action.id, ".active")) verb = want ? "start" : "stop";
  else return Module::Apply(ctx, action);
  auto r = RunChecked(ctx, Name(), fmt::format("systemctl {} {}", verb, transport::ShellQuote(unit)));
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::services
