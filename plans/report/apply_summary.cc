#include "plans/report/apply_summary.h"

#include <vector>

#include <fmt/format.h>

#include "inventory/hostlist.h"

namespace plumb::plans::report {

std::string ApplySummaryText(const RolloutResult& res, const std::string& run_id,
                             const std::string& journal_path) {
  std::string out;
  for (const NodeOutcome& n : res.nodes) {
    if (n.status == NodeState::kFailed)
      out += fmt::format("FAILED {} at {}: {}{}\n", n.node, n.step, n.error,
                         n.left_drained ? " (left drained)" : "");
    if (n.status == NodeState::kBusy) out += fmt::format("BUSY {}: {}\n", n.node, n.error);
  }
  if (!res.halt_reason.empty()) out += fmt::format("{}: {}\n", Name(res.outcome), res.halt_reason);
  if (res.outcome == RunState::kPaused && !res.next_window.empty())
    out += fmt::format("paused outside the maintenance window; next opens {}: plumb apply "
                       "--resume {}\n", res.next_window, run_id);
  else if (res.outcome == RunState::kPaused)
    out += fmt::format("paused: plumb apply --resume {} continues once the scheduler answers\n",
                       run_id);
  std::vector<std::string> left;
  for (const NodeOutcome& n : res.nodes)
    if (n.status == NodeState::kFailed && n.left_drained) left.push_back(n.node);
  // A failed canary stops the campaign: --resume must not roll the fleet past it.
  const bool canary_failed = res.halt_reason.find("canary") != std::string::npos;
  if (res.outcome == RunState::kInterrupted || res.outcome == RunState::kIncomplete ||
      (res.outcome == RunState::kHalted && !canary_failed))
    out += fmt::format("continue with: plumb apply --resume {}{}\n", run_id,
                       res.outcome == RunState::kIncomplete ? " (it retries the busy and stale nodes)" : "");
  if (!left.empty())
    out += fmt::format("left drained by this run: {}. Fix the cause, then: plumb apply "
                       "--retry-failed {} (re-plans and retries them; returns them to service "
                       "once they converge){}\n",
                       inventory::CompressHostlist(left), run_id,
                       canary_failed ? "; --resume will not roll the fleet past a failed canary: "
                                       "after the retry, plan and apply the rest anew"
                                     : "");
  if (res.journal_failed) {
    // Say what happened: a store that did not answer is not a full disk.
    const Diagnostic* why = nullptr;
    for (const Diagnostic& d : res.diags.items())
      if (d.code.rfind("journal.", 0) == 0 && why == nullptr) why = &d;
    if (why != nullptr && why->code == "journal.unreachable")
      out += fmt::format("the store {} stopped answering, so the run stopped: what it could not "
                         "record (the end of the step under way, the nodes not started, the run's "
                         "end) is not in the store. Once it answers, plumb apply --resume {} "
                         "re-checks each node and continues\n",
                         journal_path, run_id);
    else if (why != nullptr && why->code == "journal.postgresql")
      out += fmt::format("the store {} refused or lost a write ({}), so the run stopped; once "
                         "that is fixed, plumb apply --resume {} re-checks each node and continues\n",
                         journal_path, why->message, run_id);
    else
      out += fmt::format("the journal at {} could not be written: free space there, then plumb "
                         "apply --resume {}\n", journal_path, run_id);
  }
  return out;
}

}  // namespace plumb::plans::report
