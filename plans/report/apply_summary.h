#pragma once
/// What `plumb apply` prints when a run ends, for people: each failed or busy node, why the run
/// stopped, and the one command that continues from here (--resume, --retry-failed, or nothing).
#include <string>

#include "plans/rollout/rollout.h"

namespace plumb::plans::report {

/// The closing text of run `run_id` (ends with a newline, or is empty when the run is done and
/// nothing needs saying). `journal_path` is named when the journal could not be written.
std::string ApplySummaryText(const RolloutResult& res, const std::string& run_id,
                             const std::string& journal_path);

}  // namespace plumb::plans::report
