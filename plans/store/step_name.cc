#include "plans/store/step_name.h"

#include <array>
#include <utility>

namespace plumb::plans {
namespace {

constexpr std::array<std::pair<StepKind, std::string_view>, 15> kNames{{
    {StepKind::kProbe, "probe"},
    {StepKind::kLease, "lease"},
    {StepKind::kClaim, "claim"},
    {StepKind::kDrain, "drain"},
    {StepKind::kWaitDrained, "wait-drained"},
    {StepKind::kApply, "apply"},
    {StepKind::kTask, "task"},
    {StepKind::kReboot, "reboot"},
    {StepKind::kWaitBoot, "wait-boot"},
    {StepKind::kVerify, "verify"},
    {StepKind::kHealth, "health"},
    {StepKind::kMarker, "marker"},
    {StepKind::kResume, "resume"},
    {StepKind::kUndrain, "undrain"},
    {StepKind::kStack, "stack"},
}};

// An apply and its BMC task name their action, a stack step what it does (clear, set); health may name its check ("health" alone is
// the health phase before a check starts); every other kind stands alone.
bool NeedsArg(StepKind k) {
  return k == StepKind::kApply || k == StepKind::kTask || k == StepKind::kStack;
}
bool TakesArg(StepKind k) { return NeedsArg(k) || k == StepKind::kHealth; }

}  // namespace

std::string_view Name(StepKind k) {
  for (const auto& [kind, name] : kNames)
    if (kind == k) return name;
  return "?";
}

std::optional<StepName> StepName::Parse(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view word = text.substr(0, colon);
  for (const auto& [kind, name] : kNames) {
    if (name != word) continue;
    if (colon == std::string_view::npos) {
      if (NeedsArg(kind)) return std::nullopt;
      return StepName(kind);
    }
    if (!TakesArg(kind)) return std::nullopt;
    const std::string_view arg = text.substr(colon + 1);
    if (arg.empty()) return std::nullopt;
    return StepName(kind, std::string(arg));
  }
  return std::nullopt;
}

std::string StepName::Text() const {
  std::string t(Name(kind_));
  if (!arg_.empty()) t += ":" + arg_;
  return t;
}

}  // namespace plumb::plans
