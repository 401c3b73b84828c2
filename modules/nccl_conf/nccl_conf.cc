#include "modules/nccl_conf/nccl_conf.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/module_util.h"
#include "modules/nccl_conf/parse.h"
#include "schemas/json_pointer.h"

namespace plumb::modules::nccl_conf {

const ModuleInfo& NcclConfModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "nccl_conf",
      .owns = {"/nccl_conf"},
      .channel = Channel::kInBand,
      .after = {},
      .reads = "`/etc/nccl.conf`",
      .changes = "rewrites the pinned keys' lines of `/etc/nccl.conf` (temp file + mv)",
      .disruption = Disruption::kNone};
  return kInfo;
}

using transport::ShellQuote;

std::string NcclConfModule::ProbeScript() const {
  return fmt::format("plumb_cat conf {}", kConfFile);
}

Result<Facts> NcclConfModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}

std::vector<Action> NcclConfModule::Diff(const nlohmann::json& desired, const Facts& facts) const {
  std::vector<Action> actions;
  if (!Wants(desired)) return actions;
  for (const auto& [name, v] : desired["nccl_conf"].items()) {
    const std::string want = ScalarString(v);
    const nlohmann::json* have = Lookup(facts, {"values", name});
    const bool has = have && have->is_string();
    if (has && have->get<std::string>() == want) continue;
    actions.push_back(MakeAction(
        Name(), "nccl_conf." + name, "nccl_conf." + name, "/nccl_conf/" + schemas::PointerToken(name),
        fmt::format("set {}={} in {} (have {})", name, want, kConfFile,
                    has ? have->get<std::string>() : std::string("no such line")),
        has ? *have : nlohmann::json(), want, Disruption::kNone, {{"nccl_conf", name}}));
  }
  return actions;
}

std::string SetCommand(std::string_view name, std::string_view value) {
  // awk keeps every line but those of this name (NCCL splits at the first '='); the temp file
  // sits beside the real one, so mv is an atomic rename: NCCL never reads a half-written file.
  return fmt::format(
      "{{ if [ -f {f} ]; then awk -v k={k} 'index($0, k \"=\") != 1' {f}; fi; "
      "printf '%s=%s\\n' {k} {v}; }} > {t} && chmod 0644 {t} && mv -f {t} {f}",
      fmt::arg("f", std::string(kConfFile)), fmt::arg("t", "/etc/.nccl.conf.plumb-tmp"),
      fmt::arg("k", ShellQuote(name)), fmt::arg("v", ShellQuote(value)));
}

ApplyOutcome NcclConfModule::Apply(NodeContext& ctx, const Action& action) const {
  const std::string name = action.params.value("nccl_conf", "");
  if (name.empty() || !action.after.is_string()) return Module::Apply(ctx, action);
  const std::string value = action.after.get<std::string>();
  if (!IsSafeName(name) || !IsSafeValue(value))
    return ApplyOutcome::Failed(Diagnostic::Error(
        "apply.nccl_conf", fmt::format("refusing to write '{}' to {}", name, kConfFile), {},
        "nccl_conf." + name, "names are NCCL_[A-Z0-9_]; values [A-Za-z0-9_.,:=^/+-]"));
  auto r = RunChecked(ctx, Name(), SetCommand(name, value));
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::nccl_conf
