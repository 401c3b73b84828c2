#pragma once
/// Recovering a run the journal lost (a CI runner's workspace went away with it): the
/// scheduler still says which nodes the run drained ("plumb:<run>:<step>"), and which of them
/// failed ("plumb:<run>:failed:..."). Those that failed stay failed (drained, reason kept,
/// counted against max_failures), the others are adopted: treated as in progress, every step
/// re-checked before it runs again.
#include <functional>
#include <string>
#include <vector>

#include "modules/drain/drainer.h"
#include "plans/plan/plan.h"
#include "plans/store/journal.h"
#include "schemas/result.h"

namespace plumb::plans {

struct Recovery {
  std::vector<std::string> adopt;    ///< drained by the run, not failed: in progress
  std::vector<std::string> failed;   ///< failed before the journal was lost: recorded as failed
};

/// `drainer_for` gives the scheduler of a rollout policy. The failed nodes are written to the
/// journal (status "failed", step "journal-lost") before this returns.
Result<Recovery> RecoverFromScheduler(
    Journal& journal, const std::function<modules::Drainer*(const std::string& rollout)>& drainer_for,
    const Plan& plan, const std::string& run, const std::string& now);

}  // namespace plumb::plans
