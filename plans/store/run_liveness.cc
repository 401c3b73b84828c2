#include "plans/store/run_liveness.h"

#include <set>

#include <fmt/format.h>

#include "plans/core/clock.h"
#include "plans/core/process_identity.h"
#include "plans/plan/plan_json.h"

namespace plumb::plans {

RunLiveness LivenessOf(const RunRecord& r, Journal& j) {
  if (r.outcome != RunState::kRunning) return {false, std::string(Name(r.outcome))};
  const std::string resume = "plumb apply --resume " + r.id;
  if (r.owner_host == HostName() && !OwnerAlive(r.owner_pid, {}))
    return {false, "running (owner gone: " + resume + ")"};
  auto lock = j.LockOfRun(r.id);
  if (!lock) return {true, "running"};   // cannot tell: as recorded
  if (!lock->has_value())
    return {false, "running? (no process holds its lock: it stopped without recording its end; " + resume + ")"};
  auto now = j.StoreNow();
  if (now && (*lock)->expires < Rfc3339(*now))
    return {false, fmt::format("running? (its lock expired at {}: {} pid {} stopped renewing it; {} takes it over)",
                               (*lock)->expires, (*lock)->owner_host, (*lock)->owner_pid, resume)};
  return {true, "running"};
}

std::vector<std::string> NodesWithoutRow(const RunRecord& r, const std::vector<NodeRecord>& rows) {
  std::set<std::string> have;
  for (const auto& n : rows) have.insert(n.node);
  std::vector<std::string> out;
  auto j = nlohmann::json::parse(r.plan_json, nullptr, false);
  if (j.is_discarded()) return out;
  auto plan = PlanFromJson(j);
  if (!plan) return out;
  for (const auto& b : plan->batches)   // the nodes the run was to roll (not a plan's checks only)
    for (const auto& n : b.nodes)
      if (!have.count(n)) out.push_back(n);
  return out;
}

std::string StoppedNodeNote(const RunRecord& r, const NodeRecord& n, bool live, Journal& j) {
  if (n.status != NodeState::kRunning || live) return {};
  // Its last step as the journal has it: an intent without an outcome is a step that was
  // under way when the process stopped (or could no longer write).
  std::string step = n.last_step;
  bool open = false;
  if (auto steps = j.Steps(r.id, n.node); steps && !steps->empty()) {
    step = steps->back().step;
    open = steps->back().outcome == StepState::kNone;
  }
  if (open)
    return "its process stopped during " + step +
           " (its intent is recorded, not how it ended); --resume re-checks it";
  return "its process stopped" + (step.empty() ? std::string() : " after " + step) +
         " without recording where the node ended; --resume re-checks it";
}

}  // namespace plumb::plans
