#pragma once
/// `plumb drift --tag-stacks`: after a live read, the schedulers' stack tags made true from it
/// (plans/rollout/stack_reassert.h says which node gets which tag). Only tags are written.
#include <string>
#include <vector>

#include "plans/observe/schedulers.h"
#include "plans/report/read_run.h"
#include "plans/rollout/stack_reassert.h"
#include "schemas/diagnostics.h"

namespace plumb::plans::report {

struct StackTagsRun {
  std::vector<StackTagChange> written;
  Diagnostics diags;   ///< an error: a scheduler could not be read; warnings: refused tags
  bool ok() const { return !diags.HasErrors(); }
};

/// Reads what `schedulers` show of the run's nodes and writes the tags that differ from what
/// the read found (at the loaded commit).
StackTagsRun TagStacksAfterRead(const ReadRunResult& rr, const Schedulers& schedulers);

/// For stderr: one line per tag written ("stack tag: n1 shows gpu-2025q4@0123456789ab (was
/// (none): in sync)"), a count line, and the diagnostics.
std::string StackTagsText(const StackTagsRun& run);

}  // namespace plumb::plans::report
