#include "modules/sysctl/sysctl.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/module_util.h"
#include "modules/sysctl/parse.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::sysctl {

const ModuleInfo& SysctlModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "sysctl",
      .owns = {"/sysctl"},
      .channel = Channel::kInBand,
      .after = {},
      .reads = "`sysctl -a`",
      .changes = "`sysctl -w` + `/etc/sysctl.d/90-plumb.conf`",
      .disruption = Disruption::kNone};
  return kInfo;
}

using transport::ShellQuote;

Result<Facts> SysctlModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}


std::vector<Action> SysctlModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  for (const auto& [key, v] : desired["sysctl"].items()) {
    std::string want = NormalizeValue(ScalarString(v));
    const auto* have = Lookup(facts, {"values", key});
    std::string current = have && have->is_string() ? NormalizeValue(have->get<std::string>()) : "";
    if (have && have->is_string() && current == want) continue;
    actions.push_back(MakeAction(
        Name(), "sysctl." + key, "sysctl." + key, "/sysctl/" + schemas::PointerToken(key),
        fmt::format("set {} = {} (have {})", key, want, have ? current : "no such key"),
        have && have->is_string() ? nlohmann::json(current) : nlohmann::json(), want,
        Disruption::kNone, {{"sysctl", key}}));
  }
  return actions;
}

std::string PersistCommand(std::string_view key, std::string_view value) {
  // awk drops the key's old line; the temp file sits in the same directory (so mv is an atomic
  // rename) and does not end in .conf (so `sysctl --system` never reads a half-written file).
  return fmt::format(
      "mkdir -p /etc/sysctl.d && {{ if [ -f {f} ]; then awk -v k={k} '$1 != k' {f}; fi; "
      "printf '%s = %s\\n' {k} {v}; }} > {t} && chmod 0644 {t} && mv -f {t} {f}",
      fmt::arg("f", std::string(kPersistFile)), fmt::arg("t", "/etc/sysctl.d/.90-plumb.conf.tmp"),
      fmt::arg("k", ShellQuote(key)), fmt::arg("v", ShellQuote(value)));
}

ApplyOutcome SysctlModule::Apply(NodeContext& ctx, const Action& action) const {
  std::string key = action.params.value("sysctl", "");
  if (key.empty() || !action.after.is_string()) return Module::Apply(ctx, action);
  std::string value = action.after.get<std::string>();
  if (!IsSafeKey(key) || value.find('\n') != std::string::npos || key.find('\\') != std::string::npos)
    return ApplyOutcome::Failed(Diagnostic::Error("apply.sysctl", fmt::format("refusing to write sysctl '{}'", key), {},
                             "sysctl." + key));
  auto w = RunChecked(ctx, Name(), "sysctl -w " + ShellQuote(key + "=" + value));
  if (!w.ok()) return ApplyOutcome::Failed(w.error());
  auto p = RunChecked(ctx, Name(), PersistCommand(key, value));
  if (!p.ok()) return ApplyOutcome::Failed(p.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::sysctl
