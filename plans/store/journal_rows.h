#pragma once
/// What the SQLite and PostgreSQL journals share beyond their SQL dialects: the columns their
/// queries select, rows read back into records, a row's chain image, and the cluster lock's
/// rule. Each backend has its own row type; any type with Text(col), Int(col), IsInt(col),
/// Name(col) and Columns() serves (SQLite's statement, a PostgreSQL result row).
#include <fmt/format.h>
#include <string>

#include <nlohmann/json.hpp>

#include "plans/core/digest.h"
#include "plans/store/journal.h"

namespace plumb::plans::journal_rows {

// The columns every backend selects, in the order the readers below take them.
#define PLUMB_JOURNAL_RUN_SELECT                                                          \
  "SELECT id, cluster, plan_digest, plan_json, commit_sha, repo, started_at, ended_at, "  \
  "owner_host, owner_pid, outcome, summary, plan_commit, who FROM runs"
#define PLUMB_JOURNAL_STEP_SELECT                                                                 \
  "SELECT s.id, s.run_id, s.node, s.step, s.detail, s.started_at, s.ended_at, s.duration_ms, "   \
  "s.outcome, s.error, COALESCE(r.commit_sha, '') FROM steps s LEFT JOIN runs r ON r.id = s.run_id"
#define PLUMB_JOURNAL_LOCK_SELECT \
  "SELECT cluster, run_id, owner_host, owner_pid, since, expires, owner_start FROM locks"
#define PLUMB_JOURNAL_NODE_SELECT                                                          \
  "SELECT run_id, node, status, last_step, admin_drained, admin_reason, error, "           \
  "started_at, ended_at, note FROM nodes"

/// The chained tables, in the order a migration adopts their rows and Verify reads them.
inline constexpr const char* kChainedTables[] = {"runs", "steps", "nodes", "facts"};

inline nlohmann::json ParseDetail(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

// A word this plumb does not know (a row edited by hand, a newer plumb's journal) reads as the
// state that makes the engine look again rather than trust it: a step with no outcome is
// re-checked before it runs again, a node still "running" is carried on step by step, and a
// run is not taken for finished. VerifyChain names the edit itself.
inline StepState StepStateOf(const std::string& w) { return ParseStepState(w).value_or(StepState::kNone); }
inline NodeState NodeStateOf(const std::string& w) { return ParseNodeState(w).value_or(NodeState::kRunning); }
inline RunState RunStateOf(const std::string& w) { return ParseRunState(w).value_or(RunState::kRunning); }

template <class Row>
RunRecord RunFrom(const Row& s) {
  RunRecord r;
  r.id = s.Text(0);
  r.cluster = s.Text(1);
  r.plan_digest = s.Text(2);
  r.plan_json = s.Text(3);
  r.commit = s.Text(4);
  r.repo = s.Text(5);
  r.started_at = s.Text(6);
  r.ended_at = s.Text(7);
  r.owner_host = s.Text(8);
  r.owner_pid = s.Int(9);
  r.outcome = RunStateOf(s.Text(10));
  r.summary = s.Text(11);
  r.plan_commit = s.Text(12);
  r.who = RunWho::FromJson(nlohmann::json::parse(s.Text(13), nullptr, false));
  return r;
}

template <class Row>
StepRecord StepFrom(const Row& s) {
  StepRecord r;
  r.id = s.Int(0);
  r.run = s.Text(1);
  r.node = s.Text(2);
  r.step = s.Text(3);
  r.detail = ParseDetail(s.Text(4));
  r.started_at = s.Text(5);
  r.ended_at = s.Text(6);
  r.duration_ms = s.Int(7);
  r.outcome = StepStateOf(s.Text(8));
  r.error = s.Text(9);
  r.commit = s.Text(10);
  return r;
}

template <class Row>
NodeRecord NodeFrom(const Row& s) {
  NodeRecord n;
  n.run = s.Text(0);
  n.node = s.Text(1);
  n.status = NodeStateOf(s.Text(2));
  n.last_step = s.Text(3);
  n.admin_drained = s.Int(4) != 0;
  n.admin_reason = s.Text(5);
  n.error = s.Text(6);
  n.started_at = s.Text(7);
  n.ended_at = s.Text(8);
  n.note = s.Text(9);
  return n;
}

template <class Row>
LockInfo LockFrom(const Row& s) {
  LockInfo l;
  l.cluster = s.Text(0);
  l.run = s.Text(1);
  l.owner_host = s.Text(2);
  l.owner_pid = s.Int(3);
  l.since = s.Text(4);
  l.expires = s.Text(5);
  l.owner_start = s.Text(6);
  return l;
}

/// The row of `tbl` (a `SELECT *`) as the chain records it: every column by name (big texts as
/// their SHA-256), minus what changes without meaning (a node's note, rewritten at every
/// heartbeat).
template <class Row>
nlohmann::json ImageFrom(const std::string& tbl, const Row& q) {
  nlohmann::json image = nlohmann::json::object();
  for (int c = 0; c < q.Columns(); ++c) {
    const std::string name = q.Name(c);
    if (tbl == "nodes" && name == "note") continue;
    if ((tbl == "runs" && name == "plan_json") || (tbl == "facts" && name == "facts")) {
      image[name + "_sha256"] = Sha256Hex(q.Text(c));
      continue;
    }
    if (q.IsInt(c)) image[name] = q.Int(c);
    else image[name] = q.Text(c);
  }
  return image;
}

/// The key a chain entry names a row of `tbl` by, from its image.
inline std::string ChainKeyOf(const std::string& tbl, const nlohmann::json& image) {
  if (tbl == "nodes") return image.value("run_id", "") + "/" + image.value("node", "");
  if (tbl == "runs") return image.value("id", "");
  return std::to_string(image.value("id", int64_t{0}));
}

/// The ORDER BY a table's rows are read in for Verify (and adopted in by migration 3).
inline const char* ChainOrderOf(const std::string& tbl) {
  return tbl == "nodes" ? " ORDER BY run_id, node" : tbl == "runs" ? " ORDER BY started_at, id" : " ORDER BY id";
}

/// RenewLock's answer when the row is gone or another process's (taken over after expiry).
inline Diagnostic LockLost(const LockInfo& mine) {
  return Diagnostic::Error("journal.lock-lost",
                           fmt::format("run {} (pid {} on {}) no longer holds the lock of cluster {}",
                                       mine.run, mine.owner_pid, mine.owner_host, mine.cluster));
}

/// The cluster lock's rule: does `cur`, read at `now`, keep `want` out? An unexpired lock
/// belongs to its process: another process is refused even for the same run (a second
/// `apply --resume` while the first still runs would do every step twice). A caller that knows
/// the holder died takes it over with ForceUnlock first.
inline bool LockKeepsOut(const LockInfo& cur, const LockInfo& want, const std::string& now) {
  const bool same_owner = cur.run == want.run && cur.owner_host == want.owner_host &&
                          cur.owner_pid == want.owner_pid && cur.owner_start == want.owner_start;
  return !same_owner && cur.expires > now;
}

}  // namespace plumb::plans::journal_rows
