#include "modules/kernel_modules/kernel_modules.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/kernel_modules/parse.h"
#include "modules/module_util.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::kernel_modules {

const ModuleInfo& KernelModulesModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "kernel_modules",
      .owns = {"/kernel_modules"},
      .channel = Channel::kInBand,
      .after = {"nvidia_driver", "ofed"},
      .reads = "`/sys/module/*/parameters/*`",
      .changes = "`/etc/modprobe.d/plumb.conf`",
      .disruption = Disruption::kReboot};
  return kInfo;
}

using transport::ShellQuote;

std::string KernelModulesModule::ProbeScript() const {
  // Write-only parameters make grep complain on stderr; those are dropped, not errors.
  return "plumb_begin params; grep -H '' /sys/module/*/parameters/* 2>/dev/null; plumb_end params $?";
}

Result<Facts> KernelModulesModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}


std::vector<Action> KernelModulesModule::Diff(const nlohmann::json& desired,
                                              const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  for (const auto& [module, params] : desired["kernel_modules"].items()) {
    if (!params.is_object()) continue;
    for (const auto& [param, v] : params.items()) {
      std::string want = ScalarString(v);
      const auto* have = Lookup(facts, {"modules", module, param});
      std::string current = have && have->is_string() ? have->get<std::string>() : "";
      if (have && have->is_string() && ParamMatches(want, current)) continue;
      std::string key = fmt::format("kernel_modules.{}.{}", module, param);
      actions.push_back(MakeAction(
          Name(), key, key, fmt::format("/kernel_modules/{}/{}", schemas::PointerToken(module), schemas::PointerToken(param)),
          fmt::format("set {} {}={} and reboot (have {})", module, param, want,
                      have ? current : "not loaded"),
          have && have->is_string() ? nlohmann::json(current) : nlohmann::json(), want,
          Disruption::kReboot, {{"module", module}, {"param", param}}));
    }
  }
  return actions;
}

std::string PersistCommand(std::string_view module, std::string_view param, std::string_view value) {
  return fmt::format(
      "mkdir -p /etc/modprobe.d && {{ if [ -f {f} ]; then awk -v m={m} -v p={p} "
      "'!($1 == \"options\" && $2 == m && index($3, p \"=\") == 1)' {f}; fi; "
      "printf 'options %s %s=%s\\n' {m} {p} {v}; }} > {t} && chmod 0644 {t} && mv -f {t} {f}",
      fmt::arg("f", std::string(kPersistFile)), fmt::arg("t", "/etc/modprobe.d/.plumb.conf.tmp"),
      fmt::arg("m", ShellQuote(module)), fmt::arg("p", ShellQuote(param)),
      fmt::arg("v", ShellQuote(value)));
}

ApplyOutcome KernelModulesModule::Apply(NodeContext& ctx, const Action& action) const {
  std::string module = action.params.value("module", "");
  std::string param = action.params.value("param", "");
  if (module.empty() || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string value = action.after.get<std::string>();
  bool value_ok = !value.empty();
  for (char c : value)
    value_ok = value_ok && c != '\n' && c != ' ' && c != '\t' && c != '\\';
  if (!IsSafeName(module) || !IsSafeName(param) || !value_ok)
    return ApplyOutcome::Failed(Diagnostic::Error("apply.kernel_modules",
                             fmt::format("refusing to write module option {} {}", module, param)));
  auto r = RunChecked(ctx, Name(), PersistCommand(module, param, value));
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::kernel_modules
