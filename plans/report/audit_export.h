#pragma once
/// `plumb audit export`: the evidence an auditor asks for, from the journal. Per node, every
/// run that touched it since a date: what it changed (each planned change, its before and
/// after values and how its step ended), when, from which commit (and the commit the plan was
/// reviewed at, when apply accepted it at the merge), by whom (operator, CI actor, approver,
/// the commit's author, committer and signer) - and the hash chain's head and verdict, so the
/// export can later prove the journal was not rewritten (plumb history --verify --anchor HEAD).
/// Pure renderers over CollectAudit's data; the HTML is one self-contained page.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/store/journal.h"
#include "schemas/result.h"

namespace plumb::plans::report {

struct AuditRun {
  RunRecord run;                    ///< plan_json dropped (the changes below come from it)
  std::vector<NodeRecord> nodes;
  std::vector<StepRecord> steps;
  nlohmann::json plan_nodes = nlohmann::json::object();   ///< node -> the plan's actions
};

struct AuditData {
  std::string since;                ///< as given: YYYY-MM-DD or RFC 3339
  std::string generated_at;
  std::string journal;              ///< its path, for the reader
  ChainReport chain;
  std::vector<AuditRun> runs;       ///< oldest first
};

/// Is `since` a date (YYYY-MM-DD) or an RFC 3339 UTC time? The error says which forms work.
Status CheckSince(const std::string& since);

/// The runs started at or after `since` (time strings compare as times), with their nodes,
/// steps and planned changes, and the chain's verdict.
Result<AuditData> CollectAudit(Journal& journal, const std::string& since,
                               const std::string& journal_path, const std::string& now);

/// `plumb.audit/v1`: {format, generated_at, since, journal, chain{head, entries, verified,
/// problems}, nodes[{node, applied[{run, status, started_at, ended_at, commit, plan_commit,
/// plan_digest, cluster, who{...}, changes[{key, before, after, disruption, outcome}],
/// steps[{step, outcome, started_at, ended_at, error}]}]}]}.
nlohmann::json AuditToJson(const AuditData& a);

/// One page (no script, nothing fetched): a banner with the chain's verdict and head hash
/// (green verified, red not), then per node a table of its runs.
std::string AuditToHtml(const AuditData& a);

}  // namespace plumb::plans::report
