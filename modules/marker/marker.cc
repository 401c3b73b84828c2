#include "modules/marker/marker.h"

#include <fmt/format.h>

#include "modules/apply_util.h"
#include "modules/marker/parse.h"
#include "modules/module_util.h"

namespace plumb::modules::marker {

const ModuleInfo& MarkerModule::Info() const {
  static const ModuleInfo kInfo{
      .name = "marker",
      .owns = {},
      .channel = Channel::kInBand,
      .after = {},
      .reads = "`/var/lib/plumb/marker.json`",
      .changes = "written after verify",
      .disruption = Disruption::kNone,
      .applied_commit_key = "commit"};
  return kInfo;
}

std::string MarkerModule::ProbeScript() const {
  return fmt::format("plumb_cat marker {}", kMarkerPath);
}

Result<Facts> MarkerModule::ParseProbe(std::string_view out, int) const {
  auto parts = PartsOf(Name(), out);
  if (!parts.ok()) return parts.error();
  return FactsFromParts(*parts);
}

std::string MarkerJson(const std::string& commit, const std::string& run, const std::string& time) {
  return nlohmann::json{{"commit", commit}, {"run", run}, {"time", time}}.dump();
}

Action WriteAction(const std::string& commit, const std::string& run, const std::string& time) {
  nlohmann::json after = {{"commit", commit}, {"run", run}, {"time", time}};
  return MakeAction("marker", "marker.write", "marker", "", fmt::format("record commit {} (run {})", commit, run),
                    nullptr, after, Disruption::kNone, after);
}

ApplyOutcome MarkerModule::Apply(NodeContext& ctx, const Action& action) const {
  if (action.id != "marker.write") return Module::Apply(ctx, action);
  std::string commit = action.params.value("commit", "");
  std::string run = action.params.value("run", "");
  std::string time = action.params.value("time", "");
  if (!IsCommit(commit) || !IsToken(run) || !IsToken(time))
    return ApplyOutcome::Failed(Diagnostic::Error("apply.marker", "refusing to write a malformed marker"));
  const std::string tmp = "/var/lib/plumb/.marker.json.tmp";
  std::string cmd = fmt::format(
      "mkdir -p /var/lib/plumb && printf '%s\\n' {} > {} && mv -f {} {}",
      transport::ShellQuote(MarkerJson(commit, run, time)), tmp, tmp, kMarkerPath);
  auto r = RunChecked(ctx, Name(), cmd);
  if (!r.ok()) return ApplyOutcome::Failed(r.error());
  return ApplyOutcome::Done();
}

}  // namespace plumb::modules::marker
