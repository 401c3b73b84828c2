#pragma once
/// marker: plumb's node marker /var/lib/plumb/marker.json (commit, run, time), written after a
/// node verifies so the next gather knows which commit it is at. Facts only in the diff (no
/// desired key); the apply engine writes it with WriteAction(...).
#include "modules/module.h"

namespace plumb::modules::marker {

inline constexpr std::string_view kMarkerPath = "/var/lib/plumb/marker.json";

class MarkerModule final : public Module {
 public:
  const ModuleInfo& Info() const override;
  std::string ProbeScript() const override;
  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  std::vector<Action> Diff(const nlohmann::json&, const Facts&) const override { return {}; }
  /// Only "marker.write" (from WriteAction): writes the file atomically (temp file + mv).
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;
};

/// The action that records `commit` (40 hex), `run` and `time` (RFC 3339) on the node.
Action WriteAction(const std::string& commit, const std::string& run, const std::string& time);
/// The marker file's content for those values (one JSON line).
std::string MarkerJson(const std::string& commit, const std::string& run, const std::string& time);

}  // namespace plumb::modules::marker
