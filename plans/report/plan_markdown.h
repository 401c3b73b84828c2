#pragma once
/// The plan as a pull-request comment (GitHub- and GitLab-flavoured markdown): the summary line
/// first, the disruption (which nodes drain, reboot, re-flash), the batches, peak nodes out, the
/// estimate, the jobs that block a drain, each node's changes collapsed by host list in a
/// <details> block (a row per member of a key, and why where the values do not say), the
/// waived keys, the health findings (not changes), unreadable nodes and the planner's
/// diagnostics.
///
/// It always fits a comment: GitHub refuses one over 65,536 characters. When the whole plan
/// does not fit, sections are cut at an item boundary, the cut says how many items were left
/// out, and the comment ends by pointing at the plan file (the artefact) that holds everything.
/// Every value that came from a node or the repo is escaped (table cells, code spans, HTML), so
/// a fact cannot break the table or inject markup.
#include <string>
#include <vector>

#include "plans/plan/plan.h"

namespace plumb::plans::report {

struct MarkdownOptions {
  size_t max_chars = 65536;   ///< GitHub's limit on a comment's body
  /// What the truncation note points at: "the `plan.json` artefact of this pipeline".
  std::string artefact = "the plan file (`plumb plan --out`)";
  /// Lines shown under the summary (the commit's signature as the policy judged it).
  std::vector<std::string> notes;
};

/// Deterministic: the same plan and options give the same bytes, never more than max_chars.
std::string PlanToMarkdown(const Plan& plan, const MarkdownOptions& options = {});

/// A value for a markdown table cell: in a code span, `|` escaped, backticks and newlines
/// replaced, HTML metacharacters as entities.
std::string MarkdownCell(std::string_view s);

}  // namespace plumb::plans::report
