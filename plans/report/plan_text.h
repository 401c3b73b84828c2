#pragma once
/// The human rendering of a plan, in terraform's spirit: per node (identical nodes collapsed
/// into one Slurm host list) each change as `~ key: before -> after  (disruption, reason)`,
/// then the disruption summary: which nodes drain, reboot, re-flash; the batches; peak nodes
/// out; estimated duration; jobs that block a drain now; unreadable nodes ("plan incomplete").
#include <string>
#include <vector>

#include "plans/plan.h"

namespace plumb::plans::report {

/// The whole human plan. Deterministic: same plan, same bytes.
std::string PlanToText(const Plan& plan);

/// The plan's nodes grouped by disruption, most disruptive first, with the words every rendering
/// uses ("drain + reboot"); only disruptions some node has.
struct DisruptionRow {
  const char* label;
  std::vector<std::string> nodes;
};
std::vector<DisruptionRow> DisruptionRows(const Plan& plan);

/// "1h 05m", "12m", "45s".
std::string FormatDuration(int seconds);

/// `~` a value changes, `+` a value is added (before is null), `-` removed (after is null).
char ChangeSymbol(const modules::Action& a);

}  // namespace plumb::plans::report
