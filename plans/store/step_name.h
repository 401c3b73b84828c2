#pragma once
// The steps a node walks through in an apply, as a type. The journal keeps their text ("probe",
// "apply:nvidia_driver.install", "health:2"...): that text is what older journals hold and what
// `plumb runs` shows, so it never changes; the engine names steps by kind, so a misspelt step
// does not compile, and --resume matches the kinds it knows instead of comparing strings.
#include <optional>
#include <string>
#include <string_view>

namespace plumb::plans {

enum class StepKind {
  kProbe,         ///< "probe": re-read the node before touching it
  kLease,         ///< "lease": this run's lease on the node
  kClaim,         ///< "claim": this run's claim in the scheduler (a shared budget)
  kDrain,         ///< "drain"
  kWaitDrained,   ///< "wait-drained": the node's jobs end
  kApply,         ///< "apply:<action id>"
  kTask,          ///< "task:<action id>": the BMC task that action started, open while it runs
  kReboot,        ///< "reboot"
  kWaitBoot,      ///< "wait-boot": a new boot id
  kVerify,        ///< "verify": the modules' verify on fresh facts
  kHealth,        ///< "health" (the phase), "health:checks", "health:<n>"
  kMarker,        ///< "marker": /var/lib/plumb/marker.json written
  kResume,        ///< "resume": back in service
  kUndrain,       ///< "undrain": a drain given back untouched (deferred, gave way)
  /// "stack:clear" (before the first change: the scheduler shows no stack on the node),
  /// "stack:set" (after the marker: it shows the commit's), modules/drain/stack_tag.h
  kStack,
};

/// The journal's word for a kind ("wait-boot"); for apply and health, the part before ':'.
std::string_view Name(StepKind k);

class StepName {
 public:
  // Implicit: a step without an argument is named by its kind (Step(StepKind::kReboot, ...)).
  StepName(StepKind kind) : kind_(kind) {}   // NOLINT(google-explicit-constructor)
  /// "apply:<action id>".
  static StepName Apply(std::string action_id) { return {StepKind::kApply, std::move(action_id)}; }
  /// "task:<action id>".
  static StepName Task(std::string action_id) { return {StepKind::kTask, std::move(action_id)}; }
  /// "health:<which>" ("checks", or a check's number).
  static StepName Health(std::string which) { return {StepKind::kHealth, std::move(which)}; }
  /// "stack:clear" / "stack:set".
  static StepName Stack(std::string which) { return {StepKind::kStack, std::move(which)}; }
  /// A journal's text; nullopt for a word no plumb writes.
  static std::optional<StepName> Parse(std::string_view text);

  StepKind kind() const { return kind_; }
  const std::string& arg() const { return arg_; }
  /// The journal's text.
  std::string Text() const;
  bool operator==(const StepName&) const = default;

 private:
  StepName(StepKind kind, std::string arg) : kind_(kind), arg_(std::move(arg)) {}
  StepKind kind_;
  std::string arg_;
};

}  // namespace plumb::plans
