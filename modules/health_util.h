#pragma once
/// What the health modules (ModuleInfo::Kind::kHealth: dcgm, gpu_health, nccl_bw, ib_health)
/// share, once: reading their framed parts, their thresholds under `health.<module>`, the
/// checks for parts that could not be read.
///
/// A health module checks; it never changes a node. Its Diff is empty: a failed check is not a
/// change. Its Checks are what the planner reports as findings (plans/plan/plan.h Finding), `plumb
/// health` and acceptance as results, and the rollout's health step judges; its Apply refuses
/// anything ("apply.health"): the node needs a repair, then a new run.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "modules/check_result.h"
#include "modules/module.h"
#include "modules/probe_script.h"

namespace plumb::modules {

/// The base of the health modules: ParseProbe (framed parts -> the parser's FactsFromParts),
/// Diff (nothing: checks are findings, not changes) and Apply (RefuseCheck). A module adds its
/// Info, its snippet (ProbeScript, or CheckScript when on demand) and its Checks.
class HealthModule : public Module {
 public:
  using FactsFromPartsFn = nlohmann::json (*)(const std::vector<ProbePart>&);

  Result<Facts> ParseProbe(std::string_view out, int exit_status) const override;
  /// Always empty: what a health module finds is reported as findings (its Checks), never
  /// planned or applied as a change.
  std::vector<Action> Diff(const nlohmann::json& desired, const Facts& facts) const override;
  ApplyOutcome Apply(NodeContext& ctx, const Action& action) const override;

 protected:
  explicit HealthModule(FactsFromPartsFn facts_from_parts) : facts_from_parts_(facts_from_parts) {}

 private:
  FactsFromPartsFn facts_from_parts_;
};

/// A module's check results, each with its module's name: `constexpr CheckMaker Make{"dcgm"};`
/// then Make(id, name, subject, status, measured, threshold, message).
struct CheckMaker {
  std::string_view module;
  CheckResult operator()(std::string id, std::string name, std::string subject, CheckStatus status,
                         nlohmann::json measured, nlohmann::json threshold, std::string message) const;
};

/// `m.Checks(desired, facts)` for facts read back from a snapshot or a journal: facts without
/// the shape the module's parser writes are an error "facts.malformed" naming the module (as
/// Module::DiffFacts), not an exception that ends the whole plan.
Result<std::vector<CheckResult>> CheckFacts(const Module& m, const nlohmann::json& desired,
                                            const Facts& facts);

/// Apply of anything a health module is asked to apply: always Failed, code "apply.health",
/// with the action's summary and a hint (repair the node, then re-run plumb).
ApplyOutcome RefuseCheck(const Action& action);

/// desired["health"][module] when it is an object, else an empty object (never throws).
const nlohmann::json& HealthSettings(const nlohmann::json& desired, std::string_view module);

/// A whole number setting in [min, max], or nullopt when unset, not a whole number or out of
/// range (validate refuses those; a hand-made desired state falls back to the default).
std::optional<long long> IntSetting(const nlohmann::json& settings, std::string_view key,
                                    long long min, long long max);
/// A number setting >= 0 (integer or not), or nullopt.
std::optional<double> NumberSetting(const nlohmann::json& settings, std::string_view key);
/// A boolean setting, or `fallback`.
bool BoolSetting(const nlohmann::json& settings, std::string_view key, bool fallback);

/// A whole-number field of `j` (facts may be any JSON: never throws), or `fallback`.
long long IntField(const nlohmann::json& j, std::string_view key, long long fallback);

/// One kFail check per entry of the facts' kPartErrorsKey: "<module>.<part>.unread", with the
/// part error's message, so a part that could not be read never passes silently. `label` gives
/// the check's name and subject for a part name (e.g. {"perfquery", "mlx5_0 port 1"}).
std::vector<CheckResult> PartErrorChecks(
    std::string_view module, const nlohmann::json& facts,
    const std::function<std::pair<std::string, std::string>(const std::string& part)>& label);
/// Does the facts' kPartErrorsKey list `part`?
bool PartFailed(const nlohmann::json& facts, std::string_view part);

/// A name as a check id segment: lower case, every run of other characters one '_'
/// ("GPU Memory" -> "gpu_memory", "PCIe" -> "pcie").
std::string CheckIdSegment(std::string_view name);

/// A number as people read it: 212.4, 8, 0.5 (no trailing zeros, at most 2 decimals).
std::string FormatNumber(double v);

}  // namespace plumb::modules
