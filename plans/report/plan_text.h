#pragma once
/// The human rendering of a plan, in terraform's spirit: per node (identical nodes collapsed
/// into one Slurm host list) each change as `~ key: before -> after  (disruption, reason)`,
/// then the disruption summary: which nodes drain, reboot, re-flash; the batches; peak nodes
/// out; estimated duration; jobs that block a drain now; unreadable nodes ("plan incomplete").
#include <string>
#include <vector>

#include "plans/plan/plan.h"

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

/// `~` a value changes, `+` a value is added (before is null), `-` removed (after is null).
char ChangeSymbol(const modules::Action& a);

/// The nodes left as they are because they failed a health check and their rollout says
/// `unhealthy: skip`, one line per rollout ("left as it is, unhealthy (rollout r: unhealthy:
/// skip): n4; repair, then plan again"); "" when none. Plan text and apply say it.
std::string SkippedUnhealthyNote(const Plan& plan);

/// The closing line, for text and markdown alike: "Plan: 2 node(s) to change (1 reboot, 1
/// drain), 3 in sync, 0 unreadable[, N waived key(s) ...][; health: ...]." A node skipped as
/// unhealthy is not counted as to change; "Nothing to apply: ..." when only such nodes have
/// changes; "No changes: ..." when none has.
std::string SummaryText(const Plan& plan);

/// The summary line's health part: "; health: 1 node(s) unhealthy, 2 finding(s), 1 node(s)
/// skipped"; "" when the plan has no finding.
std::string HealthNote(const Plan& plan);

}  // namespace plumb::plans::report
